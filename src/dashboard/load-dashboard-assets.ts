/**
 * The dashboard's built files, read once at start-up from `dist/dashboard-ui/` (what
 * `npm run build` bundles from `src/dashboard/ui` with Vite), and served by the gateway from memory.
 * Every asset comes from here: the page fetches nothing from any other host.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DashboardAsset, DashboardAssets } from '../gateway/gateway-context.js';

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/** Where the build writes the bundle, beside this module's own compiled folder. */
export const defaultDashboardFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dashboard-ui');

function filesUnder(folder: string, prefix = ''): string[] {
  return readdirSync(folder).flatMap((entry) => {
    const relative = prefix === '' ? entry : `${prefix}/${entry}`;
    return statSync(path.join(folder, entry)).isDirectory() ? filesUnder(path.join(folder, entry), relative) : [relative];
  });
}

/** Null when the folder holds no built page (a checkout that has not run `npm run build`). */
export function loadDashboardAssets(folder: string = defaultDashboardFolder): DashboardAssets | null {
  let names: string[];
  try {
    names = filesUnder(folder);
  } catch {
    return null;
  }
  if (!names.includes('index.html')) return null;
  const files = new Map<string, DashboardAsset>(
    names.map((name) => [name, { body: readFileSync(path.join(folder, name)), contentType: contentTypes[path.extname(name)] ?? 'application/octet-stream' }]),
  );
  return { get: (name) => files.get(name) ?? null };
}
