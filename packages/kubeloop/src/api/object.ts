/**
 * A JSON object as parsed from the wire: a Kubernetes object, or any part of one, before a
 * type is known. The SDK and the server share this one declaration (the server's `Obj`).
 */
export type JsonObject = Record<string, unknown>;
