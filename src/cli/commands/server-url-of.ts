import type { Command } from 'commander';
import { readConfigFile, typedFlags } from '../configuration/command-options.js';
import { flattenConfigFile } from '../configuration/configuration.js';
import { commandSchemas } from '../configuration/configuration-schema.js';
import { resolveServerUrl } from './resolve-server-url.js';

/**
 * The running server the client commands talk to: `--url`, the file's `url` or `CLAWRL_URL` (resolved
 * by the schema), else the host and port the server itself reads (`resolve-server-url.ts`).
 */
export function serverUrlOf(command: Command, url: string | undefined): string {
  const configFile = typedFlags(command, commandSchemas.client).config as string | undefined;
  const file = flattenConfigFile(readConfigFile(configFile ?? process.env.CLAWRL_CONFIG));
  return resolveServerUrl({ flagUrl: url, file, environment: process.env });
}
