/** Human-readable log lines on stderr; the CLI's choice of where service logs go. */
import type { Logger } from '../../spec/logger.js';

function format(level: string, message: string, fields?: Record<string, unknown>): string {
  const rendered = Object.entries(fields ?? {})
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return `${new Date().toISOString()} ${level} ${message}${rendered ? ` ${rendered}` : ''}\n`;
}

export function createConsoleLogger(options: { quiet?: boolean } = {}): Logger {
  return {
    info(message, fields) {
      if (!options.quiet) process.stderr.write(format('info', message, fields));
    },
    warn(message, fields) {
      process.stderr.write(format('warn', message, fields));
    },
    error(message, fields) {
      process.stderr.write(format('error', message, fields));
    },
  };
}
