/**
 * The labelled redaction corpus: agent-shaped documents (environment files, config files, logs,
 * shell sessions and tool calls, code, git output, network listings, chat messages) with secrets
 * and personal data planted where agents meet them, and look-alikes beside them. Every planted
 * value carries its span, and whether it must go (with the kind it should become) or stay.
 * Generated from a seed, so the figures in docs/results.md replay exactly.
 */
import { createSeededRandom, type SeededRandom } from '../../core/seeded-random.js';
import { environmentRead, lookAlikeMakers, secretMakers } from './redaction-corpus-values.js';

/** A planted value: a secret (`kind` is its placeholder kind) or a look-alike (`kind` is `look-alike:<what>`). */
export interface CorpusLabel {
  start: number;
  end: number;
  kind: string;
  /** Must it be redacted? */
  secret: boolean;
  /** Which maker planted it (`openai`, `uuid`, ...). */
  source: string;
}

export interface CorpusDocument {
  /** `env-file`, `json-config`, ... */
  shape: string;
  text: string;
  labels: CorpusLabel[];
}

/** Writes a document piece by piece, recording where each planted value lands. */
class DocumentWriter {
  text = '';
  readonly labels: CorpusLabel[] = [];
  constructor(readonly random: SeededRandom) {}

  write(text: string): this {
    this.text += text;
    return this;
  }

  /** Plants a secret from `maker` (a key of `secretMakers`). */
  secret(maker: string): this {
    const made = (secretMakers[maker] ?? failMaker(maker))(this.random);
    this.labels.push({ start: this.text.length, end: this.text.length + made.value.length, kind: made.kind, secret: true, source: maker });
    this.text += made.value;
    return this;
  }

  /** Plants a look-alike from `maker` (a key of `lookAlikeMakers`), or this exact text. */
  lookAlike(maker: string, exact?: string): this {
    const value = exact ?? (lookAlikeMakers[maker] ?? failMaker(maker))(this.random);
    this.labels.push({ start: this.text.length, end: this.text.length + value.length, kind: `look-alike:${maker}`, secret: false, source: maker });
    this.text += value;
    return this;
  }
}

function failMaker(name: string): never {
  throw new RangeError(`no corpus maker named ${name}`);
}

const providerMakers = ['openai', 'anthropic', 'awsAccess', 'github', 'gitlab', 'slack', 'stripe', 'google', 'huggingface', 'npm', 'twilio', 'sendgrid'];
const envKeyNames: Record<string, string> = {
  openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY', awsAccess: 'AWS_ACCESS_KEY_ID', github: 'GITHUB_TOKEN', gitlab: 'GITLAB_TOKEN', slack: 'SLACK_BOT_TOKEN',
  stripe: 'STRIPE_SECRET_KEY', google: 'GOOGLE_API_KEY', huggingface: 'HF_TOKEN', npm: 'NPM_TOKEN', twilio: 'TWILIO_API_KEY', sendgrid: 'SENDGRID_API_KEY',
};

type Shape = (writer: DocumentWriter) => void;

const shapes: Record<string, Shape> = {
  'env-file': (writer) => {
    const { random } = writer;
    writer.write('$ cat .env\nNODE_ENV=production\nPORT=').lookAlike('number', String(random.integer(3000, 9000))).write('\n');
    for (const maker of random.shuffle(providerMakers).slice(0, 3)) writer.write(`${envKeyNames[maker]}=`).secret(maker).write('\n');
    writer.write(random.pick(['DB_PASSWORD=', 'POSTGRES_PASSWORD=', 'REDIS_PASS=', 'ADMIN_PWD='])).secret('password').write('\n');
    writer.write(random.pick(['JWT_SECRET=', 'SESSION_SECRET=', 'WEBHOOK_SIGNING_KEY=', 'ENCRYPTION_KEY='])).secret('randomSecret').write('\n');
    writer.write('APP_VERSION=').lookAlike('semver').write('\nBUILD_SHA=').lookAlike('gitHash').write('\nMAX_TOKENS=').lookAlike('number', String(random.pick([256, 1024, 4096]))).write('\n');
    writer.write('FALLBACK_KEY=').lookAlike('envReference').write('\nREQUEST_ID=').lookAlike('uuid').write('\n');
  },
  'json-config': (writer) => {
    const { random } = writer;
    writer.write('{"tool_call_id":"call_1","content":"{\\n  \\"database\\": {\\"host\\": \\"db.internal\\", \\"user\\": \\"app\\", \\"password\\": \\"').secret('password');
    writer.write('\\"},\\n  \\"apiKey\\": \\"').secret(random.pick(providerMakers)).write('\\",\\n  \\"owner\\": \\"').secret('email');
    writer.write('\\",\\n  \\"id\\": \\"').lookAlike('uuid').write('\\",\\n  \\"max_tokens\\": ').lookAlike('number', String(random.integer(64, 8192)));
    writer.write(',\\n  \\"tokenizer\\": \\"gpt2\\",\\n  \\"client_secret\\": \\"').secret('randomSecret').write('\\",\\n  \\"updated\\": \\"').lookAlike('timestamp').write('\\"\\n}"}');
  },
  'log-lines': (writer) => {
    for (let line = 0; line < 4; line += 1) {
      writer.lookAlike('timestamp').write(` INFO request from `).secret('ipv4').write(` user=`).secret('email').write(' trace=').lookAlike('uuid').write(' took ').lookAlike('number').write('\n');
    }
    writer.lookAlike('timestamp').write(' WARN retrying against ').lookAlike('loopback').write(' after ').lookAlike('epoch').write('\n');
  },
  'shell-session': (writer) => {
    const { random } = writer;
    writer.write('$ curl -s https://api.service.dev/v1/items -H "Authorization: Bearer ').secret(random.pick(['jwt', 'openai', 'github'])).write('"\n');
    writer.write(`$ git clone https://${random.pick(['deploy', 'ci', 'oauth2'])}:`).secret('password').write('@git.internal.dev/team/app.git\n');
    writer.write(`$ psql "postgresql://app:`).secret('password').write('@db.internal:5432/app"\n');
    writer.write('$ mysql -u root --password ').secret('password').write(' -e "select 1"\n');
    writer.write('$ git log -1\ncommit ').lookAlike('gitHash').write('\nAuthor: Dev <').secret('email').write('>\nDate: ').lookAlike('date').write(' ').lookAlike('time').write('\n');
    writer.write('$ git remote -v\norigin ').lookAlike('sshLogin').write(' (fetch)\n$ npm ls\n').lookAlike('packageSpec').write('\n');
  },
  'tool-call-arguments': (writer) => {
    const { random } = writer;
    writer.write('{"name":"send_email","arguments":"{\\"to\\":\\"').secret('email').write('\\",\\"cc\\":\\"').secret('email');
    writer.write(`\\",\\"body\\":\\"Order `).lookAlike('orderNumber').write(' shipped, tracking ').lookAlike('trackingNumber').write('. Call me on ').secret('phone');
    writer.write(`\\",\\"api_key\\":\\"`).secret(random.pick(providerMakers)).write('\\"}"}');
  },
  'code-snippet': (writer) => {
    const { random } = writer;
    writer.write("import OpenAI from 'openai';\nconst client = new OpenAI({ apiKey: '").secret('openai').write("' });\nconst backup = new OpenAI({ apiKey: ").lookAlike('envReference', environmentRead('OPENAI_API_KEY')).write(' });\n');
    writer.write('const stripe = require("stripe")("').secret('stripe').write('");\n// pinned to ').lookAlike('semver').write(', see ').lookAlike('gitHash').write('\n');
    writer.write('const colors = ["').lookAlike('hexColor').write('", "').lookAlike('hexColor').write(`"];\nstd_include("`).lookAlike('cppScope').write('");\nconst hf = "').secret(random.pick(['huggingface', 'google']))
      .write('";\nconst integrity = "').lookAlike('integrity').write('";\nconst options = { apiKey: ').lookAlike('codeReference').write(', password: ').lookAlike('codeReference').write(' };\n');
  },
  'private-key-file': (writer) => {
    writer.write('$ cat ~/.ssh/id_deploy\n').secret('privateKey').write('\n$ ls -la ~/.ssh\n-rw------- 1 dev dev 2602 ').lookAlike('date').write(' id_deploy\n');
  },
  'network-listing': (writer) => {
    writer.write('$ ip addr\n1: lo: <LOOPBACK,UP>\n    inet ').lookAlike('loopback', '127.0.0.1').write('/8\n    inet6 ').lookAlike('loopback', '::1').write('/128\n2: eth0: <UP>\n    link/ether ').lookAlike('macAddress');
    writer.write('\n    inet ').secret('ipv4').write('/24 netmask ').lookAlike('loopback', '255.255.255.0').write('\n    inet6 ').secret('ipv6').write('/64\n$ kubectl get pods\n').lookAlike('podName').write(' Running ').lookAlike('number').write('\n');
  },
  'chat-message': (writer) => {
    const { random } = writer;
    writer.write(`Hi, I'm ${random.pick(['Ana', 'Jonas', 'Priya', 'Kenji'])}. My card `).secret('card').write(' was charged twice for order ').lookAlike('orderNumber').write(' on ').lookAlike('date');
    writer.write('. Please refund to IBAN ').secret('iban').write(' or email me at ').secret('email').write('. My phone: ').secret('phone').write('. The book ISBN ').lookAlike('isbn');
    writer.write(' cost ').lookAlike('number').write(', reference ').lookAlike('luhnFailing').write('. The password is ').secret('password').write('.');
  },
  'yaml-config': (writer) => {
    const { random } = writer;
    writer.write('apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\n  uid: ').lookAlike('uuid').write('\nstringData:\n  slack_token: ').secret('slack').write('\n  smtp_password: "').secret('password');
    writer.write('"\n  aws_secret_access_key: ').secret('randomSecret').write('\n  aws_access_key_id: ').secret('awsAccess').write('\nspec:\n  image: registry.dev/app@').lookAlike('sha256').write('\n  replicas: ').lookAlike('number', String(random.integer(1, 9)));
    writer.write('\n  sendgrid: ').secret('sendgrid').write('\n  support: ').secret('email').write('\n');
  },
  'support-ticket': (writer) => {
    const { random } = writer;
    writer.write('Ticket ').lookAlike('orderNumber').write(` opened ${random.pick(['by', 'for'])} <a href="mailto:`).secret('email').write(`">customer</a>\nTel. `).secret('phone').write('\nServer ').secret('ipv4').write(`:${random.integer(1024, 65535)} refused the login; our docs at 127.0.0.1:8080 say to run\n`);
    writer.write('  docker login registry.dev -u bob -p ').secret('password').write('\nand the storage account uses DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=').secret('azureKey').write(';EndpointSuffix=core.windows.net\n');
    writer.write('Config check: password_min_length: ').lookAlike('number', String(random.integer(8, 16))).write(', token_count: ').lookAlike('number').write(', auth: true, header "Authorization: Bearer ').lookAlike('envReference', '<token>').write('"\n');
    writer.write('Avatar: data:image/png;base64,').lookAlike('base64Blob').write('\nHost user@localhost, build ').lookAlike('semver').write(' on ').lookAlike('date').write('\n');
  },
};

/** `count` documents, cycling through the shapes, each from its own seeded draw. */
export function generateRedactionCorpus(count: number, seed: number | string = 1): CorpusDocument[] {
  const names = Object.keys(shapes);
  return Array.from({ length: count }, (_unused, index) => {
    const shape = names[index % names.length] ?? 'env-file';
    const writer = new DocumentWriter(createSeededRandom(`${seed}:${index}`));
    (shapes[shape] ?? failMaker(shape))(writer);
    return { shape, text: writer.text, labels: writer.labels };
  });
}
