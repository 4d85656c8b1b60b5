/**
 * The part of the `ws` client (a dependency of @kubernetes/client-node, without its own types
 * here) that the WebSocket tests drive.
 */
declare module 'ws' {
  import { EventEmitter } from 'node:events';
  export default class WebSocket extends EventEmitter {
    constructor(
      url: string,
      protocols?: string | string[] | Record<string, unknown>,
      options?: Record<string, unknown>,
    );
    readonly protocol: string;
    send(data: Buffer | string): void;
    close(code?: number, reason?: string): void;
    terminate(): void;
  }
}
