/**
 * `docs/agents.md`'s SDK examples, copied as they are, against what `npm start` serves (`clawrl serve`
 * with its defaults). The only change made to a snippet is the address: the document names
 * 127.0.0.1:8400, the test's server listens on a free port. Each example's two turns must land in one
 * session with the first turn's next state linked, as the document says.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repositoryRoot, startClawrlServer, type ClawrlServer } from './testing/start-clawrl-server.js';

const run = promisify(execFile);
const document = readFileSync(path.join(repositoryRoot, 'docs', 'agents.md'), 'utf8');
const documentAddress = 'http://127.0.0.1:8400';

function block(mentioning: string): string {
  const found = [...document.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1] ?? '').find((text) => text.includes(mentioning));
  if (found === undefined) throw new Error(`docs/agents.md has no \`\`\`js block mentioning ${mentioning}`);
  return found;
}

let server: ClawrlServer;

beforeAll(async () => {
  server = await startClawrlServer([]);
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

/** The session whose first turn asked `question`, with its turns. */
async function sessionAsking(question: string): Promise<Array<Record<string, unknown>>> {
  const sessions = (await (await fetch(`${server.url}/admin/sessions`)).json()) as { data: Array<{ turnIds: string[] }> };
  for (const session of sessions.data) {
    const turns = await Promise.all(
      session.turnIds.map(async (id) => (await (await fetch(`${server.url}/admin/turns/${id}`)).json()) as Record<string, unknown>),
    );
    const messages = turns[0]?.messages as Array<{ content: string }> | undefined;
    if (messages?.some((message) => message.content === question)) return turns;
  }
  return [];
}

async function runSnippet(snippet: string): Promise<string> {
  const local = snippet.replaceAll(documentAddress, server.url);
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', local], { cwd: repositoryRoot, timeout: 60_000 });
  return stdout;
}

describe('the docs/agents.md examples', () => {
  it('names the base URLs the examples use', () => {
    expect(document).toContain(`baseURL: '${documentAddress}/v1'`);
    expect(document).toContain(`baseURL: '${documentAddress}'`);
  });

  it('the Responses API snippet gets two replies in one session', async () => {
    const stdout = await runSnippet(block('client.responses.create'));
    expect(stdout.trim().length).toBeGreaterThan(0);
    const turns = await sessionAsking('Tom has 3 apples and buys 4 more. How many now?');
    expect(turns).toHaveLength(2);
    expect(turns[0]?.nextState).toEqual([{ role: 'user', content: 'And if he eats 2?' }]);
  }, 90_000);

  it('the Messages API snippet gets two replies in one session and a token count', async () => {
    const stdout = await runSnippet(block('@anthropic-ai/sdk'));
    expect(stdout).toMatch(/\d+ prompt tokens/);
    const turns = await sessionAsking('Ann has 5 pears and gives away 2. How many are left?');
    expect(turns).toHaveLength(2);
    expect(turns[0]?.nextState).toEqual([{ role: 'user', content: 'And if she buys 3?' }]);
  }, 90_000);
});
