import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandsTable, optionsTable, recipeTable } from './configuration-tables.js';

const documentPath = path.resolve(import.meta.dirname, '..', '..', '..', 'docs', 'configuration.md');
const tables = { options: optionsTable(), recipe: recipeTable(), commands: commandsTable() };

function withTables(document: string): string {
  let written = document;
  for (const [name, table] of Object.entries(tables)) {
    const pattern = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(\\n<!-- ${name}:end -->)`);
    expect(pattern.test(written), `docs/configuration.md has no <!-- ${name}:start --> … <!-- ${name}:end --> block`).toBe(true);
    written = written.replace(pattern, (_match, start: string, end: string) => `${start}${table}${end}`);
  }
  return written;
}

describe('docs/configuration.md', () => {
  it('holds the tables the schema gives (rewrite them with UPDATE_CONFIGURATION_DOCS=1)', () => {
    const document = readFileSync(documentPath, 'utf8');
    const expected = withTables(document);
    if (process.env.UPDATE_CONFIGURATION_DOCS === '1') writeFileSync(documentPath, expected);
    else expect(document).toBe(expected);
  });
});
