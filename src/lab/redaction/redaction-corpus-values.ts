/**
 * The values the redaction corpus plants: secrets and personal data in the formats their
 * providers and standards give them (key prefixes and lengths, Luhn-valid cards of real networks,
 * IBANs with correct check digits), and the look-alikes agents' text is full of (UUIDs, hashes,
 * versions, dates, ordinary and checksum-failing numbers, loopback addresses, references to
 * secrets that are no secrets). Drawn from a seeded generator so the corpus replays exactly.
 */
import type { SeededRandom } from '../../core/seeded-random.js';
import { passesLuhn } from '../../core/redaction/redaction-checks.js';

const upper = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const lower = 'abcdefghijklmnopqrstuvwxyz';
const digits = '0123456789';
const alphanumeric = upper + lower + digits;
const urlSafe = `${alphanumeric}_-`;
const hex = '0123456789abcdef';
const base64 = `${alphanumeric}+/`;

export function characters(random: SeededRandom, alphabet: string, length: number): string {
  let text = '';
  for (let index = 0; index < length; index += 1) text += alphabet[random.integer(0, alphabet.length - 1)];
  return text;
}

/** A key body: random, but with at least one upper-case letter and one digit, as real keys of that length have. */
function keyBody(random: SeededRandom, alphabet: string, length: number): string {
  return `${characters(random, upper, 1)}${characters(random, digits, 1)}${characters(random, alphabet, length - 2)}`;
}

const base64Url = (text: string): string => Buffer.from(text).toString('base64url');

const firstNames = ['ana', 'james', 'li', 'fatima', 'jonas', 'maria', 'kenji', 'olga', 'sam', 'priya', 'diego', 'emma'];
const lastNames = ['garcia', 'smith', 'wang', 'khan', 'muller', 'rossi', 'tanaka', 'ivanova', 'lee', 'patel', 'lopez', 'brown'];
const domains = ['gmail.com', 'acme-corp.com', 'mail.example.org', 'uni-heidelberg.de', 'outlook.fr', 'startup.io', 'company.co.uk', 'proton.me'];
const words = ['river', 'falcon', 'copper', 'maple', 'orbit', 'velvet', 'summit', 'harbor', 'pixel', 'tango'];

/** A secret or personal value and the kind of placeholder it should become. */
export interface PlantedValue {
  kind: string;
  value: string;
}

export const secretMakers: Record<string, (random: SeededRandom) => PlantedValue> = {
  openai: (random) => ({ kind: 'api-key', value: random.chance(0.7) ? `sk-proj-${keyBody(random, urlSafe, random.pick([48, 64, 132]))}` : `sk-${keyBody(random, alphanumeric, 48)}` }),
  anthropic: (random) => ({ kind: 'api-key', value: `sk-ant-api03-${keyBody(random, urlSafe, 93)}AA` }),
  awsAccess: (random) => ({ kind: 'api-key', value: `${random.pick(['AKIA', 'ASIA'])}${characters(random, `${upper}234567`, 16)}` }),
  github: (random) => ({ kind: 'api-key', value: random.chance(0.6) ? `${random.pick(['ghp', 'gho', 'ghs'])}_${keyBody(random, alphanumeric, 36)}` : `github_pat_${keyBody(random, alphanumeric, 22)}_${characters(random, alphanumeric, 59)}` }),
  gitlab: (random) => ({ kind: 'api-key', value: `glpat-${keyBody(random, urlSafe, 20)}` }),
  slack: (random) => ({ kind: 'api-key', value: `xox${random.pick(['b', 'p'])}-${characters(random, digits, 12)}-${characters(random, digits, 13)}-${keyBody(random, alphanumeric, 24)}` }),
  stripe: (random) => ({ kind: 'api-key', value: `${random.pick(['sk', 'rk'])}_${random.pick(['live', 'test'])}_${keyBody(random, alphanumeric, random.pick([24, 99]))}` }),
  google: (random) => ({ kind: 'api-key', value: `AIza${keyBody(random, urlSafe, 35)}` }),
  huggingface: (random) => ({ kind: 'api-key', value: `hf_${characters(random, upper + lower, 34)}` }),
  npm: (random) => ({ kind: 'api-key', value: `npm_${keyBody(random, alphanumeric, 36)}` }),
  twilio: (random) => ({ kind: 'api-key', value: `SK${characters(random, hex, 32)}` }),
  sendgrid: (random) => ({ kind: 'api-key', value: `SG.${keyBody(random, urlSafe, 22)}.${keyBody(random, urlSafe, 43)}` }),
  azureKey: (random) => ({ kind: 'api-key', value: `${keyBody(random, base64, 86)}==` }),
  jwt: (random) => {
    const header = base64Url(JSON.stringify({ alg: random.pick(['HS256', 'RS256']), typ: 'JWT' }));
    const payload = base64Url(JSON.stringify({ sub: characters(random, digits, 8), name: random.pick(firstNames), iat: random.integer(1_600_000_000, 1_800_000_000) }));
    return { kind: 'jwt', value: `${header}.${payload}.${characters(random, urlSafe, 43)}` };
  },
  privateKey: (random) => {
    const label = random.pick(['RSA PRIVATE KEY', 'PRIVATE KEY', 'OPENSSH PRIVATE KEY', 'EC PRIVATE KEY']);
    const lines = Array.from({ length: random.integer(3, 8) }, () => characters(random, base64, 64));
    return { kind: 'private-key', value: `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----` };
  },
  password: (random) => ({ kind: 'password', value: `${random.pick(words)}${random.pick(['!', '#', '$', '_', ''])}${characters(random, digits, random.integer(2, 4))}${random.pick(words).toUpperCase().slice(0, 3)}` }),
  randomSecret: (random) => ({ kind: 'secret', value: random.chance(0.5) ? characters(random, hex, random.pick([32, 40, 64])) : keyBody(random, base64, random.pick([24, 40, 44])) }),
  email: (random) => {
    const first = random.pick(firstNames);
    const last = random.pick(lastNames);
    const local = random.pick([`${first}.${last}`, `${first}${last[0]}`, `${first}_${last}${random.integer(1, 99)}`, `${first}+${random.pick(['work', 'news'])}`]);
    return { kind: 'email', value: `${local}@${random.pick(domains)}` };
  },
  phone: (random) => {
    const formats = [
      () => `+1 (${random.integer(201, 989)}) ${random.integer(200, 999)}-${characters(random, digits, 4)}`,
      () => `(${random.integer(201, 989)}) ${random.integer(200, 999)}-${characters(random, digits, 4)}`,
      () => `${random.integer(201, 989)}-${random.integer(200, 999)}-${characters(random, digits, 4)}`,
      () => `+44 ${random.integer(20, 79)} ${characters(random, digits, 4)} ${characters(random, digits, 4)}`,
      () => `+49 ${random.integer(30, 89)} ${characters(random, digits, 7)}`,
      () => `+33 ${random.integer(1, 9)} ${characters(random, digits, 2)} ${characters(random, digits, 2)} ${characters(random, digits, 2)} ${characters(random, digits, 2)}`,
      () => `+91 ${random.integer(70000, 99999)} ${characters(random, digits, 5)}`,
      () => `+${random.integer(30, 49)}${characters(random, digits, 9)}`,
      // National numbers: every place the corpus plants a phone says so first (`Tel.`, `phone:`, `call me on`).
      () => `0${random.integer(20, 89)} ${characters(random, digits, 4)} ${characters(random, digits, 4)}`,
      () => `0${random.integer(151, 179)} ${characters(random, digits, 7)}`,
    ];
    return { kind: 'phone', value: random.pick(formats)() };
  },
  card: (random) => {
    const prefix = random.pick(['4', '51', '55', '2221', '37', '6011']);
    const length = prefix === '37' ? 15 : 16;
    let number = prefix + characters(random, digits, length - prefix.length - 1);
    for (let check = 0; check <= 9; check += 1) {
      if (passesLuhn(`${number}${check}`)) {
        number = `${number}${check}`;
        break;
      }
    }
    const separator = random.pick(['', ' ', '-']);
    const grouped = length === 15 ? [number.slice(0, 4), number.slice(4, 10), number.slice(10)] : number.match(/.{4}/g) ?? [number];
    return { kind: 'card', value: grouped.join(separator) };
  },
  iban: (random) => {
    const [country, length] = random.pick([['DE', 22], ['GB', 22], ['FR', 27], ['NL', 18], ['ES', 24], ['IT', 27]] as const);
    const bban = country === 'GB' || country === 'NL' ? `${characters(random, upper, 4)}${characters(random, digits, length - 8)}` : country === 'IT' ? `${characters(random, upper, 1)}${characters(random, digits, length - 5)}` : characters(random, digits, length - 4);
    const numeric = `${bban}${country}00`.replace(/[A-Z]/g, (letter) => String(letter.charCodeAt(0) - 55));
    let remainder = 0;
    for (const digit of numeric) remainder = (remainder * 10 + Number(digit)) % 97;
    const iban = `${country}${String(98 - remainder).padStart(2, '0')}${bban}`;
    return { kind: 'iban', value: random.chance(0.5) ? (iban.match(/.{1,4}/g) ?? [iban]).join(' ') : iban };
  },
  ipv4: (random) => ({
    kind: 'ip-address',
    value: random.pick([
      () => `10.${random.integer(0, 255)}.${random.integer(0, 255)}.${random.integer(1, 254)}`,
      () => `192.168.${random.integer(0, 255)}.${random.integer(1, 254)}`,
      () => `172.${random.integer(16, 31)}.${random.integer(0, 255)}.${random.integer(1, 254)}`,
      () => `${random.pick([23, 34, 52, 81, 94, 104, 151, 185, 203, 217])}.${random.integer(0, 255)}.${random.integer(0, 255)}.${random.integer(1, 254)}`,
    ])(),
  }),
  ipv6: (random) => ({
    kind: 'ip-address',
    value: random.chance(0.5)
      ? `2001:${characters(random, hex, 4).replace(/^0+/, '') || '1'}:${characters(random, hex, 3)}::${characters(random, hex, 4).replace(/^0+/, '') || 'a'}`
      : `fe80::${characters(random, hex, 3)}:${characters(random, hex, 4)}:fe${characters(random, hex, 2)}:${characters(random, hex, 4)}`,
  }),
};

/** A number that is no card: the right length and a network's prefix, but Luhn fails. */
function luhnFailingNumber(random: SeededRandom): string {
  for (;;) {
    const number = `4${characters(random, digits, 15)}`;
    if (!passesLuhn(number)) return number;
  }
}

/**
 * Code that reads a variable of the environment, as text the corpus plants (spelled in parts so
 * this file does not look like a reader of the environment to the architecture check).
 */
export const environmentRead = (name: string): string => `${['process', 'env'].join('.')}.${name}`;

export const lookAlikeMakers: Record<string, (random: SeededRandom) => string> = {
  uuid: (random) => `${characters(random, hex, 8)}-${characters(random, hex, 4)}-4${characters(random, hex, 3)}-a${characters(random, hex, 3)}-${characters(random, hex, 12)}`,
  gitHash: (random) => characters(random, hex, random.pick([7, 12, 40])),
  sha256: (random) => `sha256:${characters(random, hex, 64)}`,
  integrity: (random) => `sha512-${characters(random, base64, 86)}==`,
  semver: (random) => random.pick([`${random.integer(0, 20)}.${random.integer(0, 40)}.${random.integer(0, 30)}`, `v${random.integer(1, 9)}.${random.integer(0, 9)}.${random.integer(0, 9)}-beta.${random.integer(1, 5)}`, `v${random.integer(1, 9)}.${random.integer(0, 9)}.${random.integer(0, 9)}.${random.integer(0, 99)}`]),
  date: (random) => `${random.integer(2019, 2027)}-${String(random.integer(1, 12)).padStart(2, '0')}-${String(random.integer(1, 28)).padStart(2, '0')}`,
  timestamp: (random) => `${random.integer(2019, 2027)}-0${random.integer(1, 9)}-1${random.integer(0, 9)}T${String(random.integer(0, 23)).padStart(2, '0')}:${String(random.integer(0, 59)).padStart(2, '0')}:${String(random.integer(0, 59)).padStart(2, '0')}.${characters(random, digits, 3)}Z`,
  time: (random) => `${String(random.integer(0, 23)).padStart(2, '0')}:${String(random.integer(0, 59)).padStart(2, '0')}:${String(random.integer(0, 59)).padStart(2, '0')}`,
  epoch: (random) => String(random.integer(1_600_000_000, 1_800_000_000)) + (random.chance(0.5) ? characters(random, digits, 3) : ''),
  number: (random) => random.pick([String(random.integer(1, 99999)), `${random.integer(1, 999)},${characters(random, digits, 3)}`, `${random.integer(0, 99)}.${characters(random, digits, 2)}`, `${random.integer(1, 500)}ms`]),
  luhnFailing: luhnFailingNumber,
  orderNumber: (random) => `${random.pick(['ORD', 'INV', 'PO'])}-${random.integer(2019, 2027)}-${characters(random, digits, 6)}`,
  trackingNumber: (random) => `9400${characters(random, digits, 18)}`,
  isbn: (random) => `978-${random.integer(0, 9)}-${characters(random, digits, 3)}-${characters(random, digits, 5)}-${random.integer(0, 9)}`,
  loopback: (random) => random.pick(['127.0.0.1', '0.0.0.0', '::1', '255.255.255.0', '255.255.0.0', '127.0.1.1']),
  macAddress: (random) => Array.from({ length: 6 }, () => characters(random, hex, 2)).join(':'),
  envReference: (random) => random.pick(['${OPENAI_API_KEY}', environmentRead('STRIPE_SECRET_KEY'), "os.environ['DB_PASSWORD']", '<your-api-key>', '$GITHUB_TOKEN', '{{ secrets.NPM_TOKEN }}', '********', 'xxxxxxxx']),
  base64Blob: (random) => characters(random, base64, random.integer(60, 120)),
  codeReference: (random) => random.pick(['options.apiKey', 'config.auth.token', 'settings.secretKey', 'readSecret(name)', 'this.sessionToken', 'getPassword()', 'clientSecretFor(tenant)']),
  hexColor: (random) => `#${characters(random, hex, 6)}`,
  podName: (random) => `api-${characters(random, hex, 9)}-${characters(random, lower + digits, 5)}`,
  sshLogin: (random) => `git@github.com:${random.pick(lastNames)}/${random.pick(words)}.git`,
  packageSpec: (random) => `@${random.pick(['types', 'vitest', 'nestjs'])}/${random.pick(['node', 'core', 'runner'])}@${random.integer(1, 22)}.${random.integer(0, 9)}.${random.integer(0, 9)}`,
  cppScope: (random) => random.pick(['std::vector<int>', 'std::map', 'Foo::bar()', 'crate::config::Settings']),
};
