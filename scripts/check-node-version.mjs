// Checks that this Node satisfies package.json's `engines.node`, before `npm ci` runs: the build
// (Vite) and better-sqlite3's prebuilt binaries need it, and a wrong Node otherwise shows up as an
// EBADENGINE warning or a confusing build error. Reads the range from package.json so there is one
// statement of it. Understands the forms that range uses: clauses joined by `||`, each `^X.Y.Z`
// (that major, at least X.Y.Z) or `>=X.Y.Z`.
//
//   node scripts/check-node-version.mjs [--node 20.20.2]     (--node: check that version instead)
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { node: { type: 'string', default: process.versions.node } } });
const range = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node;

const parse = (text) => text.replace(/^v/, '').split('.').map(Number);
const atLeast = (version, minimum) => {
  for (let index = 0; index < 3; index += 1) if (version[index] !== minimum[index]) return version[index] > minimum[index];
  return true;
};

const version = parse(values.node);
const satisfied = range.split('||').some((clause) => {
  const match = /^\s*(\^|>=)\s*(\d+\.\d+\.\d+)\s*$/.exec(clause);
  if (match === null) throw new Error(`check-node-version: cannot read the clause '${clause}' of engines.node '${range}'`);
  const minimum = parse(match[2]);
  return atLeast(version, minimum) && (match[1] === '>=' || version[0] === minimum[0]);
});
if (!satisfied) {
  console.error(`check-node-version: clawrl needs Node ${range} (package.json engines); this is Node ${values.node}.`);
  process.exit(1);
}
console.log(`check-node-version: ok (Node ${values.node} satisfies ${range})`);
