/**
 * The rules of AGENTS.md, checked: layer boundaries, file naming, file size, where the environment
 * may be read, and no `any`. A rule that is not checked here does not belong in AGENTS.md.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const sourceRoot = path.join(root, 'src');

/** Which layers each layer's production code may import (its own layer is always allowed). */
export const allowedImports: Record<string, readonly string[]> = {
  spec: [],
  core: ['spec'],
  tensor: ['spec'],
  model: ['spec', 'core', 'tensor'],
  engines: ['spec', 'core', 'tensor', 'model'],
  stores: ['spec', 'core'],
  buses: ['spec', 'core'],
  judge: ['spec', 'core'],
  gateway: ['spec', 'core'],
  // The web UI (ui/, bundled for the browser) reads the gateway's wire types; the asset loader its seam.
  dashboard: ['spec', 'gateway'],
  // The trainer hands each version it commits to policy serving.
  trainer: ['spec', 'core', 'serving'],
  serving: ['spec', 'core'],
  builtin: ['spec', 'core', 'judge'],
  rollouts: ['spec', 'core'],
  // The lab (the built-in model's corpus, pre-training and measurement, the personalization experiment, the
  // benches) may use the product; only the composition root imports the lab (checked below).
  lab: ['spec', 'core', 'tensor', 'model', 'judge', 'builtin', 'rollouts'],
  cli: ['spec', 'core', 'tensor', 'model', 'engines', 'stores', 'buses', 'judge', 'gateway', 'trainer', 'serving', 'builtin', 'rollouts', 'lab', 'dashboard'],
};

function walk(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const full = path.join(directory, entry);
    if (entry === '__fixtures__' || entry === 'node_modules') return [];
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}

const sourceFiles = walk(sourceRoot).filter((file) => file.endsWith('.ts') || file.endsWith('.tsx'));
const isTestCode = (file: string) => /\.(test|contract|live\.test)\.ts$/.test(file) || file.split(path.sep).includes('testing');
const productionFiles = sourceFiles.filter((file) => !isTestCode(file));
const layerOf = (file: string) => path.relative(sourceRoot, file).split(path.sep)[0] ?? '';
const relative = (file: string) => path.relative(root, file);

/** The file a relative specifier names: `.js` stands for the `.ts` or `.tsx` source. */
function resolveImport(file: string, specifier: string): string | undefined {
  const target = path.resolve(path.dirname(file), specifier);
  const candidates = target.endsWith('.js') ? [target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx')] : [target];
  return candidates.find((candidate) => sourceFiles.includes(candidate));
}

/** Every cycle of relative imports (type-only ones too) among the files, each once, found by depth-first search. */
function importCycles(files: readonly string[]): string[][] {
  const included = new Set(files);
  const edges = new Map(
    files.map((file) => [
      file,
      ts
        .preProcessFile(readFileSync(file, 'utf8'), true, true)
        .importedFiles.filter((imported) => imported.fileName.startsWith('.'))
        .map((imported) => resolveImport(file, imported.fileName))
        .filter((target): target is string => target !== undefined && included.has(target)),
    ]),
  );
  const cycles: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  function visit(file: string): void {
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file) ?? []) {
      if (onStack.has(target)) cycles.push([...stack.slice(stack.indexOf(target)), target]);
      else if (!done.has(target)) visit(target);
    }
    stack.pop();
    onStack.delete(file);
    done.add(file);
  }
  for (const file of files) if (!done.has(file)) visit(file);
  return cycles;
}

describe('architecture', () => {
  it('has a rule for every layer folder', () => {
    const layers = readdirSync(sourceRoot).filter((entry) => statSync(path.join(sourceRoot, entry)).isDirectory());
    expect(layers.filter((layer) => !(layer in allowedImports))).toEqual([]);
  });

  it('keeps production imports inside the allowed layers, and adapters out of each other', () => {
    const violations: string[] = [];
    for (const file of productionFiles) {
      const layer = layerOf(file);
      const allowed = new Set([layer, ...(allowedImports[layer] ?? [])]);
      for (const imported of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
        if (!imported.fileName.startsWith('.')) continue;
        const target = path.resolve(path.dirname(file), imported.fileName);
        const targetLayer = layerOf(target);
        if (!allowed.has(targetLayer)) violations.push(`${relative(file)} imports ${targetLayer}/ (${imported.fileName})`);
        if (target.split(path.sep).includes('testing')) violations.push(`${relative(file)} imports test code ${imported.fileName}`);
        // Adapter folders (engines/x, stores/x, buses/x) never import a sibling adapter.
        const adapterOf = (full: string) => path.relative(sourceRoot, full).split(path.sep).slice(0, 2).join('/');
        const sourceParts = path.relative(sourceRoot, file).split(path.sep);
        if (['engines', 'stores', 'buses'].includes(layer) && layer === targetLayer && sourceParts.length > 2) {
          const targetParts = path.relative(sourceRoot, target).split(path.sep);
          if (targetParts.length > 2 && adapterOf(target) !== adapterOf(file)) {
            violations.push(`${relative(file)} imports another adapter ${imported.fileName}`);
          }
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('lets only the composition root import the lab', () => {
    expect(Object.keys(allowedImports).filter((layer) => layer !== 'cli' && layer !== 'lab' && allowedImports[layer]?.includes('lab'))).toEqual([]);
  });

  it('has no import cycles among production files', () => {
    expect(importCycles(productionFiles).map((cycle) => cycle.map(relative).join(' → '))).toEqual([]);
  });

  it('names files in kebab-case after their main export', () => {
    const badNames = [...sourceFiles, ...walk(path.join(root, 'test'))]
      .filter((file) => file.endsWith('.ts') || file.endsWith('.tsx'))
      .map((file) => path.basename(file))
      .filter((name) => !/^[a-z0-9]+(-[a-z0-9]+)*(\.(test|contract|live|e2e))*\.tsx?$/.test(name));
    expect(badNames).toEqual([]);
  });

  it('keeps every source file under 500 lines', () => {
    const long = sourceFiles
      .map((file) => ({ file: relative(file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter((entry) => entry.lines > 500);
    expect(long).toEqual([]);
  });

  it('reads the environment only in the composition root (src/cli)', () => {
    const readers = productionFiles.filter((file) => layerOf(file) !== 'cli' && /\bprocess\.env\b/.test(readFileSync(file, 'utf8')));
    expect(readers.map(relative)).toEqual([]);
  });

  it('casts no configuration in src/cli through `as unknown as`: the schema types it', () => {
    const offenders = sourceFiles.filter((file) => layerOf(file) === 'cli' && /\bas unknown as\b/.test(readFileSync(file, 'utf8')));
    expect(offenders.map(relative)).toEqual([]);
  });

  it('uses no `any`', () => {
    const offenders = sourceFiles.filter((file) => /(:\s*any\b|\bas any\b|<any>)/.test(readFileSync(file, 'utf8')));
    expect(offenders.map(relative)).toEqual([]);
  });

  it("keeps the built-in model's styles, style hints, simulated users and reply check out of core", () => {
    // They live in src/builtin; core holds only what every service needs.
    const experiment = ['style', 'style-hint', 'user-preference', 'reply-coherence', 'grounded-hint'];
    const coreFiles = sourceFiles.filter((file) => layerOf(file) === 'core');
    expect(coreFiles.filter((file) => experiment.includes(path.basename(file).replace(/(\.test)?\.ts$/, ''))).map(relative)).toEqual([]);
    const names = experiment.flatMap((name) => {
      const text = readFileSync(path.join(sourceRoot, 'builtin', `${name}.ts`), 'utf8');
      return [...text.matchAll(/^export (?:const|function|type|interface) (\w+)/gm)].map((match) => match[1] as string);
    });
    expect(names).toEqual(expect.arrayContaining(['styleDimensions', 'warmPhrases', 'parseStyleHint', 'builtinUsers', 'replyIncoherence']));
    const mentions = coreFiles.flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return names.filter((name) => new RegExp(`\\b${name}\\b`).test(text)).map((name) => `${relative(file)} mentions ${name}`);
    });
    expect(mentions).toEqual([]);
  });

  it('keeps core free of I/O', () => {
    const ioModules = /from ['"](node:)?(fs|fs\/promises|net|http|https|child_process|worker_threads|dgram)['"]/;
    const offenders = productionFiles.filter((file) => layerOf(file) === 'core' && ioModules.test(readFileSync(file, 'utf8')));
    expect(offenders.map(relative)).toEqual([]);
  });
});
