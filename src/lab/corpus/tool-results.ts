/**
 * Tool calls and their results for the judge-only corpus (judge-corpus.ts): the reply is a call
 * to a tool, the next state is the tool's output, and the verdict is −1 when the tool failed
 * (a traceback, an HTTP error, permission denied, a missing file, a non-zero exit) and +1 when it
 * returned what was asked. Outputs are composed from parts so the judge learns the signs of
 * failure (error words, status codes, exit codes) rather than a few whole outputs.
 */
import type { SeededRandom } from '../../core/seeded-random.js';

export interface ToolScenario {
  /** What the user asked for. */
  request: string;
  tool: string;
  /** The call's JSON arguments. */
  arguments: string;
  /** The kind of output a success returns. */
  output: 'file' | 'listing' | 'json' | 'number' | 'shell' | 'search' | 'write' | 'query' | 'git' | 'install' | 'message';
}

const files = ['notes.md', 'src/app.ts', 'data/users.csv', 'config.yaml', 'README.txt', 'report.docx', 'scripts/deploy.sh', 'lib/math.py', 'todo.md', 'package.json'];
const folders = ['src', 'logs', 'dist', 'photos/2024', 'tests', 'docs', 'tmp', 'assets/img'];
const hosts = ['api.example.com', 'weather.example.org', 'shop.example.net', 'status.example.io', 'maps.example.com'];

export function drawToolScenario(random: SeededRandom): ToolScenario {
  const file = random.pick(files);
  const folder = random.pick(folders);
  const host = random.pick(hosts);
  const a = random.integer(3, 99);
  const b = random.integer(3, 99);
  const query = random.pick(['timeout', 'retry', 'login', 'cache', 'export']);
  return random.pick<ToolScenario>([
    { request: `Show me what is in ${file}.`, tool: random.pick(['read_file', 'open_file', 'cat']), arguments: JSON.stringify({ path: file }), output: 'file' },
    { request: `What files are in ${folder}?`, tool: random.pick(['list_directory', 'run_shell', 'ls']), arguments: JSON.stringify({ path: folder }), output: 'listing' },
    { request: `Fetch the latest data from ${host}.`, tool: random.pick(['http_get', 'fetch_url', 'web_request']), arguments: JSON.stringify({ url: `https://${host}/v1/items` }), output: 'json' },
    { request: `Use the calculator for ${a} * ${b}.`, tool: random.pick(['calculator', 'python', 'evaluate']), arguments: JSON.stringify({ expression: `${a} * ${b}` }), output: 'number' },
    { request: 'Run the test suite.', tool: random.pick(['run_shell', 'bash', 'exec']), arguments: JSON.stringify({ command: random.pick(['npm test', 'pytest -q', 'cargo test', 'go test ./...']) }), output: 'shell' },
    { request: `Build the project in ${folder}.`, tool: random.pick(['run_shell', 'bash', 'terminal']), arguments: JSON.stringify({ command: random.pick(['make', 'npm run build', 'gradle build']) }), output: 'shell' },
    { request: `Search the docs for "${query}".`, tool: random.pick(['search', 'grep', 'find_in_files']), arguments: JSON.stringify({ query }), output: 'search' },
    { request: `Save my notes to ${file}.`, tool: random.pick(['write_file', 'save_file', 'edit_file']), arguments: JSON.stringify({ path: file, content: 'draft' }), output: 'write' },
    { request: `How many orders came in since ${a} days ago?`, tool: random.pick(['sql', 'run_query', 'database']), arguments: JSON.stringify({ query: `SELECT count(*) FROM orders WHERE age_days < ${a}` }), output: 'query' },
    { request: 'Commit what I changed.', tool: random.pick(['git', 'run_shell', 'bash']), arguments: JSON.stringify({ command: random.pick(['git status', 'git log -3 --oneline', 'git commit -am "update"', 'git push']) }), output: 'git' },
    { request: `Add the ${random.pick(['lodash', 'requests', 'serde', 'zod'])} package.`, tool: random.pick(['run_shell', 'terminal', 'exec']), arguments: JSON.stringify({ command: random.pick(['npm install', 'pip install', 'cargo add']) }), output: 'install' },
    { request: `Tell ${random.pick(['Sam', 'the team', 'Priya'])} the meeting moved.`, tool: random.pick(['send_email', 'post_message', 'notify']), arguments: JSON.stringify({ to: 'team', text: 'moved to 3pm' }), output: 'message' },
  ]);
}

const exceptions = [
  'ZeroDivisionError: division by zero', "KeyError: 'name'", "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
  "ModuleNotFoundError: No module named 'pandas'", 'ValueError: invalid literal for int() with base 10', 'IndexError: list index out of range',
  "AttributeError: 'NoneType' object has no attribute 'split'", 'RecursionError: maximum recursion depth exceeded', 'FileNotFoundError: [Errno 2] No such file',
];
const jsErrors = [
  'TypeError: rows.map is not a function', 'TypeError: undefined is not an object', 'ReferenceError: total is not defined', 'SyntaxError: Unexpected token }',
  'RangeError: Invalid array length', "Error: Cannot find module './utils'", 'TypeError: fetch is not a function',
];
const httpErrors = [
  [400, 'Bad Request'], [401, 'Unauthorized'], [403, 'Forbidden'], [404, 'Not Found'], [408, 'Request Timeout'], [429, 'Too Many Requests'],
  [500, 'Internal Server Error'], [502, 'Bad Gateway'], [503, 'Service Unavailable'], [504, 'Gateway Timeout'],
] as const;

/** A failed tool's output. */
export function composeToolFailure(random: SeededRandom, scenario: ToolScenario): string {
  const path = JSON.parse(scenario.arguments) as Record<string, string>;
  const target = path.path ?? path.url ?? path.command ?? path.expression ?? path.query ?? 'input';
  const [code, reason] = random.pick(httpErrors);
  const exit = random.integer(1, 127);
  const shape = random.integer(0, 12);
  switch (shape) {
    case 0:
      // No "most recent call last" header: the held-out set's tracebacks carry it.
      return `Traceback:\n  File "${random.pick(['job.py', 'run.py', 'tool.py', 'app/cli.py'])}", line ${random.integer(2, 300)}, in <module>\n    ${random.pick(['result = compute(x)', 'rows = load()', 'value = data[key]'])}\n${random.pick(exceptions)}`;
    case 1:
      return `${random.pick(jsErrors)}\n    at ${random.pick(['run', 'main', 'Object.<anonymous>', 'handler'])} (${random.pick(['index.js', 'src/app.ts', 'lib/tool.mjs'])}:${random.integer(1, 200)}:${random.integer(1, 40)})`;
    case 2:
      return random.pick([`HTTP status ${code} ${reason}`, `status ${code} (${reason})`, `Error: request failed with status ${code}`, `{"status":${code},"error":"${reason.toLowerCase()}"}`, `HTTP/1.1 ${code} ${reason}\ncontent-type: text/html`]);
    case 3:
      return random.pick([`${target}: Permission denied`, 'EACCES: permission denied', `EACCES (permission denied) opening ${target}`, 'Access denied.', 'Operation not permitted', `cannot open ${target}: permission denied`]);
    case 4:
      return random.pick([`ENOENT: cannot find ${target}`, `${target}: does not exist`, `cat: ${target}: file missing`, `File not found: ${target}`, 'The system cannot find the path specified.']);
    case 5:
      return random.pick([`Process exited with code ${exit}`, `exit status ${exit}`, `Command failed with exit code ${exit}.`, `[exit ${exit}]`, `error: command "${target}" returned non-zero exit status ${exit}`]);
    case 6:
      return random.pick([`${random.integer(1, 9)} failed, ${random.integer(0, 40)} passed`, `FAILED tests/test_core.py::test_total - AssertionError`, `Tests: ${random.integer(1, 5)} failed, ${random.integer(3, 50)} total`, `npm ERR! code ELIFECYCLE\nnpm ERR! errno ${exit}`, 'error[E0308]: mismatched types', 'make: *** [all] Error 2', 'BUILD FAILED']);
    case 7:
      return random.pick(['Error: connect ECONNREFUSED 127.0.0.1:8080', 'Error: getaddrinfo ENOTFOUND', 'Timed out waiting for a response (30 s)', 'socket hang up', 'curl: (7) Failed to connect', 'Connection reset by peer']);
    case 8:
      return random.pick(['Segmentation fault at 0x0', 'Killed', 'fatal: repository not found', 'bash: ' + target.split(' ')[0] + ': command not found', 'Out of memory', 'panic: runtime error: index out of range']);
    case 9:
      return random.pick([`Error: invalid argument "${target}"`, 'error: unknown option', 'Invalid JSON in request body', 'SyntaxError: invalid syntax', 'Error: cannot parse the expression', 'NaN']);
    case 10:
      return random.pick(['{"ok":false,"error":"not found"}', '{"success":false,"message":"rate limit exceeded"}', '{"error":{"code":"forbidden","message":"token expired"}}', '{"status":"error","detail":"timeout"}']);
    case 11:
      // The failures of the write, query, git, install and message tools.
      return random.pick([
        'fatal: this folder is not a git repository', 'error: failed to push some refs', 'CONFLICT (content): merge conflict in app.ts', `ERROR: could not resolve the package "${target}"`,
        'npm ERR! 404 package not in the registry', 'SQL error: relation "orders" does not exist', 'ERROR:  syntax error at or near "FROM"', 'EROFS: read-only file system',
        'write failed: no space left on device', '550 mailbox unavailable, message rejected', '{"delivered":false,"reason":"invalid recipient"}', 'deadlock detected, transaction aborted',
      ]);
    default:
      return `${random.pick(['Error', 'ERROR', 'error', 'Fatal', 'Exception'])}: ${random.pick(['could not complete the request', 'something went wrong', 'the tool crashed', 'unexpected end of input', 'disk is full', 'quota exceeded', 'the service is down'])}`;
  }
}

/*
 * Successes of many shapes: a result is judged by whether the tool did what was asked, so a file's
 * text, a listing, a count or a line like "0 errors" is +1 even when it mentions failures.
 */
const fileLines = [
  '# Notes', 'milk, eggs, bread', 'meeting at 10am', 'export function add(a, b) { return a + b; }', 'name,age\nAda,36\nLin,29', 'port: 8080\ndebug: false',
  'Chapter 1', 'def area(r):\n    return 3.14 * r * r', '- [ ] email Sam\n- [x] pay rent', '{ "name": "demo", "version": "1.2.0" }', 'Dear Ms. Osei,',
  'It was a cold morning in the valley.', 'TODO: handle the error case', 'retries = 3\ntimeout_s = 20', 'SELECT id FROM users;', '<h1>Welcome</h1>',
  'import os\nprint(os.getcwd())', '2024-05-01 INFO started\n2024-05-01 WARN slow disk', 'Step 1: preheat the oven.', '| id | total |\n| 1 | 40 |',
];
const listingNames = ['index.ts', 'main.py', 'photo1.jpg', 'server.log', 'README.md', 'utils', 'data.json', 'style.css', 'test_app.py', 'Makefile', 'errors.log', 'backup.tar.gz', 'notes', 'Cargo.toml', 'go.mod'];

function composeListing(random: SeededRandom): string {
  const names = random.shuffle(listingNames).slice(0, random.integer(2, 6));
  return random.pick<() => string>([
    () => names.join('\n'),
    () => names.join('  '),
    () => names.map((name) => `-rw-r--r-- 1 user staff ${random.integer(80, 9000)} ${name}`).join('\n'),
    () => ['.', ...names.map((name, index) => `${index === names.length - 1 ? '└──' : '├──'} ${name}`)].join('\n'),
    () => `${names.map((name) => `./${name}`).join('\n')}\n${names.length} entries`,
    () => JSON.stringify(names),
  ])();
}

function composeJsonBody(random: SeededRandom): string {
  const id = random.integer(1, 999);
  return random.pick([
    `{"items":[{"id":${id},"name":"lamp"}],"count":1}`, `{"ok":true,"data":{"temp":${random.integer(-5, 35)}}}`, `{"status":"ok","results":${random.integer(1, 50)}}`,
    `HTTP 200 OK\n{"price":${random.integer(1, 500)}.99}`, '[{"city":"Lima","rain":false}]', `{"success":true,"id":${id}}`, `201 Created\n{"id":${id}}`,
    `{"user":{"name":"Ada","plan":"pro"}}`, `{"errors":[],"total":${random.integer(1, 90)}}`, `{"forecast":"sunny","high":${random.integer(10, 30)}}`,
    `{"page":1,"next":null,"data":[${id}, ${id + 1}]}`, `HTTP/1.1 200 OK\ncontent-type: application/json\n\n{"stock":${random.integer(0, 80)}}`, `{"state":"done","took_ms":${random.integer(5, 900)}}`,
  ]);
}

/** A successful tool's output. */
export function composeToolSuccess(random: SeededRandom, scenario: ToolScenario): string {
  const count = random.integer(1, 60);
  switch (scenario.output) {
    case 'file':
      return random.shuffle(fileLines).slice(0, random.integer(1, 3)).join('\n');
    case 'listing':
      return composeListing(random);
    case 'json':
      return composeJsonBody(random);
    case 'number': {
      const expression = (JSON.parse(scenario.arguments) as { expression: string }).expression;
      const [left, right] = expression.split(' * ').map(Number) as [number, number];
      return random.pick([String(left * right), `result: ${left * right}`, `= ${left * right}`, `${left * right}.0`, `{"value":${left * right}}`, `Out[1]: ${left * right}`, `${expression} = ${left * right}`]);
    }
    case 'shell':
      return random.pick([
        `${random.integer(3, 80)} passed in ${random.integer(1, 9)}.${random.integer(0, 9)}s`, `Tests: ${count} passed, ${count} total`, 'Build succeeded.',
        `compiled ${count} files\nexit code 0`, 'ok  \tgithub.com/acme/tool\t0.41s', 'Done in 3.2s.', 'All checks passed!', `Finished release target(s) in ${count}s`,
        'BUILD SUCCESSFUL', '[exit 0]', `${count} passed, 0 failed`, 'Found 0 errors. Watching for file changes.', `✓ ${count} tests`, 'webpack compiled successfully',
        `Ran ${count} tests\n\nOK`, '0 warnings, 0 errors', 'Process exited with code 0', `built in ${count}ms`, 'Server listening on port 3000',
      ]);
    case 'search':
      return random
        .shuffle(['docs/config.md:12: timeout defaults to 30 s', 'docs/api.md:40: retry up to 3 times', 'guide.md:7: login with your token', 'faq.md:3: clear the cache', 'docs/export.md:5: export as CSV', 'src/errors.ts:8: export class AppError', 'notes.md:2: ask about the cache'])
        .slice(0, random.integer(1, 3))
        .join('\n');
    case 'write':
      return random.pick([`Wrote ${random.integer(20, 4000)} bytes`, 'File saved.', `Saved ${(JSON.parse(scenario.arguments) as { path: string }).path}`, 'ok: written', '{"written":true}', `Updated 1 file (+${count} lines)`, 'Created.']);
    case 'query':
      return random.pick([`count\n-----\n${count}\n(1 row)`, `[{"count":${count}}]`, `${count}`, `| count |\n| ${count} |`, `Query OK, 1 row in set (0.0${random.integer(1, 9)} sec)\n${count}`]);
    case 'git':
      return random.pick([
        'On branch main\nnothing to commit, working tree clean', `[main ${random.integer(1000000, 9999999).toString(16)}] update\n ${random.integer(1, 9)} files changed`, 'Everything up-to-date',
        `a1b2c3d fix totals\n9f8e7d6 add tests\n0c1d2e3 first commit`, `To github.com:acme/app.git\n   4f2a1c0..9b3e2d1  main -> main`,
      ]);
    case 'install':
      return random.pick([`added ${count} packages in ${random.integer(1, 9)}s`, 'Successfully installed requests-2.31.0', `    Updating crates.io index\n      Adding serde v1.0.${count}`, `up to date, audited ${count} packages\nfound 0 vulnerabilities`]);
    case 'message':
      return random.pick(['Message sent.', '{"delivered":true}', `Email queued (id ${count})`, 'Posted to #general.', 'sent']);
  }
}
