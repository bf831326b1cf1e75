/**
 * The default detectors: provider keys and tokens, JWTs, private-key blocks, credentials in URLs,
 * headers and assignments, and personal data (emails, phone numbers, payment cards, IBANs, IP
 * addresses). A pattern finds a candidate; a check (`accept`) keeps look-alikes out (UUIDs, git
 * hashes, version strings, dates, ordinary numbers). Provider keys are recognised by their fixed
 * prefixes, so a random hex string alone (a commit, a checksum) is never taken for one; a random
 * value is taken for a secret only beside a secret-like name.
 */
import { isAnonymousIpv4, isAnonymousIpv6, isIban, isIpv6, isPaymentCardNumber, looksRandom } from './redaction-checks.js';

/** What a placeholder names: `[REDACTED:<kind>]`. A spec's own patterns may add kinds. */
export const redactionKinds = ['api-key', 'token', 'jwt', 'private-key', 'password', 'secret', 'email', 'phone', 'card', 'iban', 'ip-address'] as const;
export type RedactionKind = (typeof redactionKinds)[number];

export interface RedactionDetector {
  /** Named in a spec's `disable` list and in `clawrl redact --json`. */
  id: string;
  kind: string;
  /** Global, with indices (`dg`), so a capture group's offsets are known. */
  pattern: RegExp;
  /** The capture group that is the secret (the value of `password=value`); 0: the whole match. */
  group: number;
  /** Whether a match is what the detector is for, given the secret's text and the whole input. */
  accept?: (secret: string, text: string, start: number) => boolean;
  /**
   * A text every match holds (`@` of an email): the pattern (then sticky, `dy`) is tried only just
   * before each occurrence, from as far back as `back` characters run (at most `maxBack`), instead
   * of at every position of a 50 KB prompt.
   */
  anchor?: { text: string; back: RegExp; maxBack: number };
}

function detector(id: string, kind: RedactionKind, source: string, options: { group?: number; flags?: string; accept?: RedactionDetector['accept']; anchor?: RedactionDetector['anchor'] } = {}): RedactionDetector {
  return {
    id,
    kind,
    pattern: new RegExp(source, `${options.anchor === undefined ? 'dg' : 'dy'}${options.flags ?? ''}`),
    group: options.group ?? 0,
    ...(options.accept === undefined ? {} : { accept: options.accept }),
    ...(options.anchor === undefined ? {} : { anchor: options.anchor }),
  };
}

/** Where a sticky pattern matches first, trying each start from `from` to `to`; null when none does. */
export function stickyMatchBetween(pattern: RegExp, text: string, from: number, to: number): RegExpExecArray | null {
  for (let start = from; start <= to; start += 1) {
    pattern.lastIndex = start;
    const match = pattern.exec(text);
    if (match !== null) return match;
  }
  return null;
}

/** How far back from `at` characters matching `back` run, stopping at `floor` or after `maxBack`. */
export function runStartBefore(text: string, at: number, back: RegExp, maxBack: number, floor = 0): number {
  let start = at;
  while (start > floor && at - start < maxBack && back.test(text.charAt(start - 1))) start -= 1;
  return start;
}

/** Token edges: no word character (or key alphabet's `-`) runs on before or after. */
const before = String.raw`(?<![A-Za-z0-9_-])`;
const after = String.raw`(?![A-Za-z0-9_-])`;

/** Keys and tokens whose prefix names their provider. */
const providerKeys: RedactionDetector[] = [
  detector('anthropic-key', 'api-key', String.raw`${before}sk-ant-[A-Za-z0-9]{2,8}\d{0,2}-[A-Za-z0-9_-]{20,}${after}`),
  detector('openai-key', 'api-key', String.raw`${before}sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}${after}`, {
    // `sk-` followed by an ordinary hyphenated word chain (sk-learn-compatible-models) is no key.
    accept: (secret) => /[0-9]/.test(secret) && /[A-Z]/.test(secret),
  }),
  detector('aws-access-key', 'api-key', String.raw`${before}(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[A-Z0-9]{16}${after}`),
  detector('github-token', 'api-key', String.raw`${before}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})${after}`),
  detector('gitlab-token', 'api-key', String.raw`${before}gl(?:pat|dt|ptt|rt|cbt|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}${after}`),
  detector('slack-token', 'api-key', String.raw`${before}xox[abposre]-[A-Za-z0-9-]{10,}${after}`),
  detector('slack-webhook', 'api-key', String.raw`https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}`),
  detector('stripe-key', 'api-key', String.raw`${before}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}${after}|${before}whsec_[A-Za-z0-9]{24,}${after}`),
  detector('google-api-key', 'api-key', String.raw`${before}AIza[0-9A-Za-z_-]{35}${after}`),
  detector('google-oauth', 'token', String.raw`${before}(?:ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{30,})${after}`),
  detector('huggingface-token', 'api-key', String.raw`${before}hf_[A-Za-z0-9]{30,}${after}`),
  detector('npm-token', 'api-key', String.raw`${before}npm_[A-Za-z0-9]{36}${after}`),
  detector('pypi-token', 'api-key', String.raw`${before}pypi-AgE[A-Za-z0-9_-]{50,}${after}`),
  detector('twilio-key', 'api-key', String.raw`${before}SK[0-9a-f]{32}${after}`),
  detector('sendgrid-key', 'api-key', String.raw`${before}SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}${after}`),
  detector('mailgun-key', 'api-key', String.raw`${before}key-[0-9a-f]{32}${after}`),
  detector('azure-storage-key', 'api-key', String.raw`(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,}={0,2})`, { group: 1 }),
  detector('azure-sas-signature', 'api-key', String.raw`[?&]sig=([A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})`, { group: 1 }),
  detector('digitalocean-token', 'api-key', String.raw`${before}do[por]_v1_[a-f0-9]{64}${after}`),
  detector('shopify-token', 'api-key', String.raw`${before}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}${after}`),
  detector('databricks-token', 'api-key', String.raw`${before}dapi[a-f0-9]{32}(?:-\d)?${after}`),
  detector('groq-key', 'api-key', String.raw`${before}gsk_[A-Za-z0-9]{40,}${after}`),
  detector('xai-key', 'api-key', String.raw`${before}xai-[A-Za-z0-9]{60,}${after}`),
  detector('replicate-token', 'api-key', String.raw`${before}r8_[A-Za-z0-9]{30,}${after}`),
  detector('linear-key', 'api-key', String.raw`${before}lin_(?:api|oauth)_[A-Za-z0-9]{32,}${after}`),
  detector('notion-token', 'api-key', String.raw`${before}(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})${after}`),
  detector('telegram-bot-token', 'api-key', String.raw`${before}\d{8,10}:AA[A-Za-z0-9_-]{33}${after}`),
  detector('discord-webhook', 'api-key', String.raw`https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}`),
];

/** Words that make a name secret-like (`DB_PASSWORD`, `apiKey`, `client_secret`, `access_token`). */
const passwordWords = new Set(['password', 'passwd', 'pwd', 'pass', 'passphrase', 'passcode', 'pin']);
/** `key` counts too (`STRIPE_KEY`, `cache_key`): beside these a value is a secret only if it looks generated. */
const secretWords = new Set(['secret', 'token', 'credential', 'credentials', 'apikey', 'privatekey', 'auth', 'signature', 'salt', 'cookie', 'sessionid', 'key']);

/** The words of a name: split at `_`, `-`, `.`, and camelCase humps, lower-cased. */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_.\-]+/)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase());
}

/** `password` when the name names one, `secret` when it names a key or token, else null. */
export function secretNameKind(name: string): 'password' | 'secret' | null {
  const words = wordsOf(name);
  if (words.some((word) => passwordWords.has(word))) return 'password';
  if (words.some((word) => secretWords.has(word))) return 'secret';
  return null;
}

/** Values that are no secret: empty, booleans, placeholders, references to the environment, already redacted. */
const notAValue = /^(?:|true|false|null|none|nil|undefined|yes|no|on|off|required|optional|string|number|boolean|\*+|x+|\.\.\.+|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{[^}]*\}\}|%\([^)]*\)s|(?:process\.env|os\.environ|env)\b.*|\[REDACTED:[^\]]*\].*)$/i;

/**
 * Unquoted values that are code, not data: a member chain (`gateway.shape.apiKey`), a camelCase
 * name (`replyKeyOf`), a decimal (`39.9`), or a name called or typed (`getPassword(`, `Partial<`).
 * Agents read code all day; a quoted value is a literal and gets no such pass.
 */
function isCode(value: string, next: string): boolean {
  return next === '(' || next === '<' || /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value) || /^[a-z]+(?:[A-Z][a-z0-9]*)+$/.test(value) || /^\d+\.\d+$/.test(value);
}

/** Whether a value beside a name of this kind is the secret. A password is anything set; a key or token must look generated. */
function isSecretValue(nameKind: 'password' | 'secret', value: string): boolean {
  if (notAValue.test(value)) return false;
  if (nameKind === 'password') return value.length >= 4 && !/^\d{1,5}$/.test(value);
  return looksRandom(value);
}

/** Names the scan of credentials beside names in a spec's `disable` list and in reports. */
export const assignmentDetectorId = 'secret-assignment';

/** `NAME=value`, `NAME: value`, `"name": "value"` (also JSON-escaped, inside a tool result's string), `--name value`, `name => 'value'`; the value is group 3 (quoted) or 4. */
const assignment = String.raw`(?<![A-Za-z0-9_])([A-Za-z][A-Za-z0-9_.\-]{0,60})(?:\\?["']?\s*(?:=|:|=>|:=)\s*|\s+)(?:(\\?["'\x60])((?:(?!\2)(?:[^\\\n]|\\.)){1,400})\2|([^\s"'\x60,;{}()<>\[\]\\]{1,400}))`;
const assignmentPattern = new RegExp(assignment, 'dy');
/** Where a secret-like name may be: the scan tries the assignment pattern only at names holding one of these. */
const secretWordHint = /pass|pwd|pin|secret|token|key|auth|credential|salt|cookie|signature|session/gi;
const nameCharacter = /[A-Za-z0-9_.\-]/;

/**
 * Credentials beside a name. One pass over assignments checks the name's words, so
 * `max_tokens: 1024` and `tokenizer: "gpt2"` stay while `DB_PASSWORD=hunter2` and
 * `"api_key": "9f86d081884c7d659a2feaa0c55ad015"` go.
 */
function findAssignments(text: string): Array<{ start: number; end: number; kind: string; detector: string }> {
  const found: Array<{ start: number; end: number; kind: string; detector: string }> = [];
  secretWordHint.lastIndex = 0;
  for (let hint = secretWordHint.exec(text); hint !== null; hint = secretWordHint.exec(text)) {
    const match = stickyMatchBetween(assignmentPattern, text, runStartBefore(text, hint.index, nameCharacter, 61), hint.index);
    if (match === null) continue;
    const name = match[1] ?? '';
    const separatorIsSpace = !/[=:]/.test(text.slice(match.index + name.length, (match.indices?.[3] ?? match.indices?.[4] ?? [0])[0]));
    const nameKind = secretNameKind(name);
    const valueGroup = match[3] !== undefined ? 3 : 4;
    const value = match[valueGroup] ?? '';
    const span = match.indices?.[valueGroup];
    // Names joined to a value by a space alone count only as flags (`--password x`, `-p x` is too short to tell).
    const spaced = separatorIsSpace && !text.slice(Math.max(0, match.index - 2), match.index).endsWith('--');
    const code = valueGroup === 4 && span !== undefined && isCode(value, text.charAt(span[1]));
    if (nameKind !== null && span !== undefined && !spaced && !code && isSecretValue(nameKind, value.replace(/\\$/, ''))) {
      found.push({ start: span[0], end: value.endsWith('\\') ? span[1] - 1 : span[1], kind: nameKind, detector: assignmentDetectorId });
    }
    // Scan on from the value, which may hold assignments of its own: `a=b c=d`, and a tool result's
    // JSON text quoted inside JSON (`"content": "{\"password\": \"...\"}"`).
    if (span !== undefined) secretWordHint.lastIndex = Math.max(secretWordHint.lastIndex, span[0]);
  }
  return found;
}

/** Credentials in places whose shape says what they are. */
const credentialShapes: RedactionDetector[] = [
  detector('private-key-block', 'private-key', String.raw`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)`),
  detector('jwt', 'jwt', String.raw`${before}eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}${after}`),
  detector('url-password', 'password', String.raw`\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/?#@'"]{1,128}:([^\s/@'"]{1,256})@`, {
    group: 1,
    anchor: { text: '://', back: /[a-zA-Z0-9+.\-]/, maxBack: 21 },
    accept: (secret) => !notAValue.test(secret),
  }),
  detector('bearer-token', 'token', String.raw`\b(?:Bearer|Token)\s+([A-Za-z0-9._~+/-]{16,}=*)`, { group: 1, accept: (secret) => looksRandom(secret) }),
  detector('basic-auth', 'password', String.raw`\bBasic\s+([A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])`, { group: 1 }),
  // Command lines that take a password by a short flag: `docker login -u bob -p pw`, `mysql -uroot -ppw`, `redis-cli -a pw`.
  detector('command-password-flag', 'password', String.raw`\b(?:(?:(?:docker|podman|nerdctl|skopeo|helm registry)\s+login|sshpass)\b[^\n|;&]*?\s-p\s+|(?:mysql|mysqldump|mariadb)\b[^\n|;&]*?\s-p|redis-cli\b[^\n|;&]*?\s-a\s+)(?!-)([^\s"'\x60]{3,128})`, {
    group: 1,
    accept: (secret) => !notAValue.test(secret),
  }),
  detector('password-phrase', 'password', String.raw`\b(?:password|passphrase|passcode|pwd)\s+(?:is|was|=)\s+["'\x60]?([^\s"'\x60]{3,63}[^\s"'\x60.,;!?)])["'\x60]?[.,;!?)]*(?=\s|$)`, {
    group: 1,
    flags: 'i',
    accept: (secret) => !notAValue.test(secret),
  }),
];

/** Digits of a match, separators dropped. */
const digitsOf = (text: string): string => text.replace(/\D/g, '');

/** Words that say the number next to them is a phone number. */
const phoneContext = /(?:phone|tel|mobile|cell|call|fax|whatsapp|sms|text me|ring|contact|number|reach)\W{0,12}(?:\w+\W{1,3}){0,2}$/i;

/** Personal data: addresses, numbers and accounts that name or reach a person. */
const personalData: RedactionDetector[] = [
  detector('email', 'email', String.raw`(?<![A-Za-z0-9._%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9\-]|\.[A-Za-z0-9])`, {
    anchor: { text: '@', back: /[A-Za-z0-9._%+\-]/, maxBack: 64 },
    // `git@github.com:owner/repo.git` is an SSH login, not a mailbox.
    accept: (secret, text, start) => !(text[start + secret.length] === ':' && /^git@/i.test(secret)),
  }),
  // Before cards: an IBAN's digits may hold a Luhn-valid run with a card prefix.
  detector('iban', 'iban', String.raw`${before}[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?${after}`, { accept: (secret) => isIban(secret) }),
  // Digits glued to letters (inside an IBAN, an id) are no card: the number stands alone.
  detector('payment-card', 'card', String.raw`(?<![\w.\-])(?:\d[ \-]?){12,18}\d(?![\d.\-]?\d)(?![A-Za-z])`, {
    accept: (secret) => /^\d{4}([ \-]?)\d{4}\1\d{4}\1\d{1,7}$|^\d{4}([ \-]?)\d{6}\2\d{5}$|^\d{13,19}$/.test(secret) && isPaymentCardNumber(digitsOf(secret)),
  }),
  detector('phone-international', 'phone', String.raw`(?<![\w+.\-/])(?:\+|00)[1-9]\d{0,2}[ .\-]?(?:\(0?\d{1,4}\)[ .\-]?)?\d{1,4}(?:[ .\-]?\d{2,4}){1,4}(?![\w.\-]?\d)`, {
    accept: (secret) => {
      const digits = digitsOf(secret).replace(/^00/, '');
      return digits.length >= 8 && digits.length <= 15;
    },
  }),
  detector('phone-north-america', 'phone', String.raw`(?<![\w.\-/])(?:\(\d{3}\) ?|\d{3}[.\- ])\d{3}[.\- ]\d{4}(?![\w.\-]?\d)`, {
    // 2024-555-0100-like runs inside dates or ids are kept out by the edges; the area code never starts with 0 or 1.
    accept: (secret) => /^[2-9]/.test(digitsOf(secret)) && !/^\d{3}\.\d{3}\.\d{4}$/.test(secret),
  }),
  detector('phone-in-context', 'phone', String.raw`(?<![\w.\-/])\(?0\d{1,4}\)?[ .\-]?\d{2,4}(?:[ .\-]?\d{2,4}){1,3}(?![\w.\-]?\d)`, {
    // A national number (020 7946 0958, 0151 1234567) has no shape of its own: it counts only after a word that says "phone".
    accept: (secret, text, start) => {
      const digits = digitsOf(secret);
      return digits.length >= 9 && digits.length <= 12 && phoneContext.test(text.slice(Math.max(0, start - 40), start));
    },
  }),
  detector('ipv4', 'ip-address', String.raw`(?<![\w.\-])(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}(?![\w\-]|\.\d)`, {
    // A four-part version (v1.2.3.4, "version 10.0.0.1") is a version, and anonymous addresses stay.
    accept: (secret, text, start) => !isAnonymousIpv4(secret) && !/(?:\bv|version\s?|@)$/i.test(text.slice(Math.max(0, start - 8), start)),
  }),
  detector('ipv6', 'ip-address', String.raw`(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){1,7}(?::|(?::[0-9A-Fa-f]{1,4}){1,7}|[0-9A-Fa-f]{1,4})(?![\w:])|(?<![\w:])::(?:[0-9A-Fa-f]{1,4}:){0,6}[0-9A-Fa-f]{1,4}(?![\w:])`, {
    accept: (secret) => isIpv6(secret) && !isAnonymousIpv6(secret) && /[0-9A-Fa-f]{3,}/.test(secret),
  }),
];

/** Every default detector, secrets first: where two overlap, the earlier one here wins. */
export const defaultDetectors: readonly RedactionDetector[] = [...providerKeys, ...credentialShapes, ...personalData];

/** The detector of credentials beside names, which is a scan rather than one pattern. */
export const assignmentDetector = { id: assignmentDetectorId, find: findAssignments } as const;
