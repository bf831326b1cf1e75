/** The logging seam: services log through this, the CLI decides where it goes. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A logger that drops everything, for tests and embedded use. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
