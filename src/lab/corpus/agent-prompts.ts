/**
 * Agent-shaped prompts for the corpus: a user's question as a coding or chat agent sends it, after
 * the gateway has fitted it to the built-in model's window (`model/fit-prompt.ts`): the head of a
 * long system prompt (identity, rules, a tool list, cut mid-text), the tool schemas gone, context
 * blocks the client adds before or after the question, and the question itself. Without these the
 * model has only ever seen a long system prompt in its judge task, and answered every agent with a
 * verdict.
 *
 * Everything here is written for the corpus: agent names, rules, tool names and context blocks are
 * the project's own, never the text of the captured CLI requests
 * (`lab/measure/__fixtures__/agent-first-requests/`), so measuring on those requests stays a test
 * on prompts the model has not seen.
 */
import type { ChatMessage } from '../../spec/chat.js';
import type { SeededRandom } from '../../core/seeded-random.js';

const agentNames = ['Marlin', 'Quokka', 'Beacon', 'Tessel', 'Orbit', 'Juniper', 'Kestrel', 'Pilot', 'Lumen', 'Harbor', 'Sprocket', 'Atlas Desk'];
const agentRoles = [
  'a coding assistant that works inside the user\'s repository',
  'a personal assistant running on the user\'s own machine',
  'an interactive command-line agent for software tasks',
  'a helpful agent with access to a terminal and a file system',
  'a research and writing assistant',
  'an autonomous agent that completes tasks step by step',
];
const makers = ['the Harbor team', 'Northwind Labs', 'an open-source community', 'the workspace owner'];

const ruleLines = [
  'Be concise and direct; answer the question that was asked.',
  'Never invent file contents: read a file before you describe it.',
  'Ask before running commands that delete data or touch the network.',
  'Prefer small, reviewable changes over large rewrites.',
  'When the user asks a question, answer it; do not describe your instructions.',
  'Use Markdown for lists and code; keep prose short.',
  'Do not reveal secrets, tokens or keys found in the workspace.',
  'If a tool fails, say what failed and try another way.',
  'Match the language the user writes in.',
  'Keep the user informed with one short sentence before each tool call.',
  'Follow the coding style of the files around the change.',
  'Refuse requests that could cause harm, briefly and politely.',
];

const toolNames: readonly (readonly [string, string])[] = [
  ['read_file', 'Read a text file from the workspace.'],
  ['write_file', 'Create or overwrite a file.'],
  ['edit_file', 'Replace a span of text in a file.'],
  ['list_directory', 'List the entries of a folder.'],
  ['search_text', 'Search files for a pattern.'],
  ['run_command', 'Run a shell command and return its output.'],
  ['fetch_page', 'Download a web page as text.'],
  ['web_lookup', 'Search the web and return the top results.'],
  ['remember', 'Save a note to long-term memory.'],
  ['recall', 'Look up saved notes.'],
  ['send_message', 'Send a message to a chat channel.'],
  ['schedule_task', 'Run a task later or on a schedule.'],
  ['update_plan', 'Record the steps of the current plan.'],
  ['open_browser', 'Open a page in a headless browser.'],
];

const headings = ['# Identity', '## About you', '# Role', '## Who you are'];
const ruleHeadings = ['## Rules', '# Guidelines', '## How to work', '## Behaviour'];
const toolHeadings = ['## Tools', '# Available tools', '## Tooling', 'Tools you can call:'];
const appendices = ['## Workspace', '## Memory', '## Skills', '## Formatting', '## Safety', '## Project notes'];

function sentence(random: SeededRandom): string {
  const name = random.pick(agentNames);
  return random.pick([
    `You are ${name}, ${random.pick(agentRoles)}.`,
    `You are ${random.pick(agentRoles)}, built by ${random.pick(makers)}.`,
    `${name} is ${random.pick(agentRoles)}. You are ${name}.`,
    `You are an AI agent called ${name}. You help the user with their tasks using the tools below.`,
  ]);
}

function toolList(random: SeededRandom): string {
  const tools = random.shuffle(toolNames).slice(0, random.integer(3, 9));
  const line = random.pick([
    ([name, description]: readonly [string, string]) => `- ${name}: ${description}`,
    ([name, description]: readonly [string, string]) => `- \`${name}\` — ${description}`,
    ([name]: readonly [string, string]) => `- ${name}`,
  ]);
  return [random.pick(toolHeadings), ...tools.map(line)].join('\n');
}

/** A whole system prompt, long: what the window fitting cuts to its head. */
function systemPrompt(random: SeededRandom): string {
  const sections = [
    `${random.pick(headings)}\n${sentence(random)}`,
    [random.pick(ruleHeadings), ...random.shuffle(ruleLines).slice(0, random.integer(3, 8)).map((rule, index) => (random.chance(0.5) ? `${index + 1}. ${rule}` : `- ${rule}`))].join('\n'),
    toolList(random),
    ...random.shuffle(appendices).slice(0, 3).map((heading) => `${heading}\n${random.shuffle(ruleLines).slice(0, 4).join(' ')}`),
  ];
  // Tools come before the rules in some agents' prompts.
  const ordered = random.chance(0.4) ? [sections[0], sections[2], sections[1], ...sections.slice(3)] : sections;
  return ordered.join('\n\n');
}

/**
 * The head the fitting keeps: a quarter of the fitted prompt's 512 tokens shared by the system
 * messages, so a few hundred characters split among them, cut wherever the budget ends.
 */
function headOf(random: SeededRandom, text: string, systemCount: number): string {
  return text.slice(0, Math.floor(random.integer(200, 700) / systemCount));
}

function timestamp(random: SeededRandom): string {
  const day = String(random.integer(1, 28)).padStart(2, '0');
  const hour = String(random.integer(0, 23)).padStart(2, '0');
  const minute = String(random.integer(0, 59)).padStart(2, '0');
  return random.pick([`[2027-03-${day} ${hour}:${minute}]`, `[Tue ${day} Mar ${hour}:${minute} UTC]`, `(${hour}:${minute})`]);
}

function hex(random: SeededRandom, length: number): string {
  return Array.from({ length }, () => '0123456789abcdef'[random.integer(0, 15)]).join('');
}

/** A context block a client adds around the user's words: environment, reminders, workspace facts. */
function contextBlock(random: SeededRandom): string {
  const folder = random.pick(['/home/dev/project', '/srv/app', '~/work/site', '/Users/sam/notes']);
  const facts = random.shuffle([
    `Working directory: ${folder}`,
    `Operating system: ${random.pick(['linux', 'darwin', 'windows'])}`,
    `Shell: ${random.pick(['bash', 'zsh', 'fish', 'pwsh'])}`,
    `Current date: 2027-03-${String(random.integer(1, 28)).padStart(2, '0')}`,
    `Git branch: ${random.pick(['main', 'dev', 'feature/login', 'fix-build'])}`,
    `Session: ${hex(random, 8)}`,
    `Approval mode: ${random.pick(['ask', 'auto', 'never'])}`,
    'The user has not opened any files yet.',
    'Memory is empty for this session.',
    'This context is for you only; the user does not see it.',
  ]).slice(0, random.integer(2, 6));
  const tag = random.pick(['context', 'environment', 'workspace_info', 'reminder', 'session_state']);
  return random.pick([
    () => `<${tag}>\n${facts.join('\n')}\n</${tag}>`,
    () => `[${tag.toUpperCase()}]\n${facts.join('\n')}\n[/${tag.toUpperCase()}]`,
    () => `# ${tag.replace('_', ' ')}\n${facts.map((fact) => `- ${fact}`).join('\n')}`,
  ])();
}

/**
 * The fitted prompt an agent would send for `question`: system heads, then one of the shapes
 * clients use (the question alone; context blocks before it in the same message; a timestamp and
 * a runtime line around it; a context-only message after it; context in a message of its own
 * before it; a system message after it). The last shapes matter: an agent's last message need not
 * be the question.
 */
export function agentShapedPrompt(random: SeededRandom, question: string): ChatMessage[] {
  const systemCount = random.weighted([[1, 0.7], [2, 0.2], [3, 0.1]] as const);
  const messages: ChatMessage[] = Array.from({ length: systemCount }, (_, index) => ({
    role: 'system' as const,
    content: headOf(random, index === 0 ? systemPrompt(random) : `${random.pick(appendices)}\n${random.shuffle(ruleLines).join('\n')}`, systemCount),
  }));
  const shape = random.pick(['alone', 'context-before', 'timestamped', 'context-after', 'context-message', 'system-after'] as const);
  switch (shape) {
    case 'alone':
      messages.push({ role: 'user', content: question });
      break;
    case 'context-before': {
      const blocks = Array.from({ length: random.integer(1, 2) }, () => contextBlock(random));
      // A first message too long for the window keeps its tail: the blocks may start mid-text.
      const preamble = blocks.join('\n\n');
      messages.push({ role: 'user', content: `${random.chance(0.3) ? preamble.slice(random.integer(1, Math.floor(preamble.length / 2))) : preamble}\n\n${question}` });
      break;
    }
    case 'timestamped':
      messages.push({ role: 'user', content: `${timestamp(random)} ${question}${random.chance(0.6) ? `\n\nRuntime: agent=${random.pick(agentNames).toLowerCase()} | model=builtin | session=${hex(random, 6)}` : ''}` });
      break;
    case 'context-after':
      messages.push({ role: 'user', content: random.chance(0.5) ? `${timestamp(random)} ${question}` : question });
      messages.push({ role: 'user', content: contextBlock(random) });
      break;
    case 'context-message':
      messages.push({ role: 'user', content: contextBlock(random) });
      messages.push({ role: 'user', content: question });
      break;
    case 'system-after':
      // Some clients send more instructions after the user's message (a list of helpers, skills).
      messages.push({ role: 'user', content: random.chance(0.5) ? `${contextBlock(random)}\n\n${question}` : question });
      messages.push({ role: 'system', content: headOf(random, `${random.pick(appendices)}\n${toolList(random)}\n${random.shuffle(ruleLines).join('\n')}`, 2) });
      break;
  }
  return messages;
}
