/** How the built-in controllers report what goes wrong: to the control plane's log. */
export type ControllerLog = (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
