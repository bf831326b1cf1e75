import { describe, expect, it } from 'vitest';
import { createRedactor } from './create-redactor.js';
import { redactionSpecSchema } from './redaction-spec.js';

const redactor = createRedactor();
const redacted = (text: string): string => redactor.redact(text).text;

describe('createRedactor', () => {
  it('replaces provider keys by their prefixes, whatever the name beside them', () => {
    expect(redacted('OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0f')).toBe('OPENAI_API_KEY=[REDACTED:api-key]');
    expect(redacted('key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdEFGH used')).toBe('key [REDACTED:api-key] used');
    expect(redacted('id AKIAIOSFODNN7EXAMPLE')).toBe('id [REDACTED:api-key]');
    expect(redacted('token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789')).toBe('token [REDACTED:api-key]');
    expect(redacted('xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx')).toBe('[REDACTED:api-key]');
    expect(redacted('AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW')).toBe('[REDACTED:api-key]');
  });

  it('replaces only the secret of a credential: the value, the URL password, the bearer token', () => {
    expect(redacted('DATABASE_URL=postgres://admin:S3cr3tPass@db.internal:5432/app')).toBe('DATABASE_URL=postgres://admin:[REDACTED:password]@db.internal:5432/app');
    expect(redacted('{"password": "hunter2!", "max_tokens": 1024, "tokenizer": "gpt2"}')).toBe('{"password": "[REDACTED:password]", "max_tokens": 1024, "tokenizer": "gpt2"}');
    expect(redacted('aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY')).toBe('aws_secret_access_key = [REDACTED:secret]');
    expect(redacted('Authorization: Bearer 8f2a9c41d7e6b3f05a1c9e7d2b4f6a83')).toBe('Authorization: Bearer [REDACTED:token]');
    expect(redacted('mysql -u root --password s3cr3t!')).toBe('mysql -u root --password [REDACTED:password]');
    expect(redacted('docker login registry.dev -u bob -p river!7645RIV && mysql -uroot -ps3cr3t db')).toBe('docker login registry.dev -u bob -p [REDACTED:password] && mysql -uroot -p[REDACTED:password] db');
    expect(redacted('docker run -p 8080:80 nginx')).toBe('docker run -p 8080:80 nginx');
  });

  it('replaces JWTs and whole private-key blocks', () => {
    expect(redacted('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U')).toBe('[REDACTED:jwt]');
    expect(redacted('a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nb')).toBe('a\n[REDACTED:private-key]\nb');
  });

  it('replaces personal data: emails, phone numbers, checked cards and IBANs, IP addresses', () => {
    expect(redacted('write to jane.doe@acme-corp.com today')).toBe('write to [REDACTED:email] today');
    expect(redacted('call +44 20 7946 0958 or (415) 555-0134')).toBe('call [REDACTED:phone] or [REDACTED:phone]');
    expect(redacted('phone: 020 7946 0958')).toBe('phone: [REDACTED:phone]');
    expect(redacted('card 4111 1111 1111 1111 and 4111 1111 1111 1112')).toBe('card [REDACTED:card] and 4111 1111 1111 1112');
    expect(redacted('IBAN DE89 3704 0044 0532 0130 00')).toBe('IBAN [REDACTED:iban]');
    // Its digits hold a Luhn-valid run with a card prefix (5330676341793): still one IBAN.
    expect(redacted('IBAN GB94HCLD53306763417935')).toBe('IBAN [REDACTED:iban]');
    expect(redacted('IBAN ES70 2497 9207 1202 7221 8886')).toBe('IBAN [REDACTED:iban]');
    expect(redacted('from 10.0.3.17 and 2001:db8:85a3::8a2e:370:7334')).toBe('from [REDACTED:ip-address] and [REDACTED:ip-address]');
  });

  it('keeps look-alikes: UUIDs, git hashes, versions, dates, times, ordinary numbers, loopback, SSH logins', () => {
    const text = [
      'uuid 123e4567-e89b-12d3-a456-426614174000',
      'commit 9fceb02d0ae598e95dc970b74767f19372d61af8',
      'v1.2.3.4 and version 10.0.0.1, node 22.11.0',
      '2024-01-15T12:30:45Z and 12:30:00',
      'ids 1234567890123 and 4111 and 3.14159',
      '127.0.0.1 ::1 0.0.0.0 mask 255.255.255.0',
      'git@github.com:openai/openai-node.git and std::vector',
      'max_tokens: 1024, token_type: "Bearer", sk-learn-compatible',
      'apiKey: gateway.shape.apiKey, key: replyKeyOf, password: Partial<Options>, pass = getPassword(), secret: 39.9',
    ].join('\n');
    expect(redacted(text)).toBe(text);
  });

  it('reports spans with offsets in the input, kinds and detectors', () => {
    const result = redactor.redact('mail a@b.io then 10.1.1.1');
    expect(result.spans).toEqual([
      { start: 5, end: 11, kind: 'email', detector: 'email' },
      { start: 17, end: 25, kind: 'ip-address', detector: 'ipv4' },
    ]);
  });

  it('is idempotent: placeholders are never redacted again', () => {
    const once = redacted('PASSWORD=hunter22 mail a@b.io key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0f');
    expect(redacted(once)).toBe(once);
  });

  it('remembers long texts, as an agent resends its conversation every turn', () => {
    const history = `${'The agent read the file and ran the tests. '.repeat(20)}mail a@b.io`;
    const fresh = createRedactor();
    const first = fresh.redact(history);
    expect(first.text.endsWith('mail [REDACTED:email]')).toBe(true);
    expect(fresh.redact(history)).toBe(first);
    expect(fresh.redact('a@b.io')).not.toBe(fresh.redact('a@b.io'));
  });

  it('follows a spec: patterns added (and winning), detectors and kinds removed, texts allowed', () => {
    const custom = createRedactor(
      redactionSpecSchema.parse({
        disable: ['ipv4', 'phone'],
        patterns: [{ kind: 'ticket', pattern: 'TICKET-\\d+' }],
        allow: ['support@clawrl.dev'],
      }),
    );
    expect(custom.redact('TICKET-42 from 10.0.0.9, +44 20 7946 0958, support@clawrl.dev, bob@x.io').text).toBe('[REDACTED:ticket] from 10.0.0.9, +44 20 7946 0958, support@clawrl.dev, [REDACTED:email]');
    const only = createRedactor(redactionSpecSchema.parse({ detectors: 'none', patterns: [{ kind: 'name', pattern: 'Alice', flags: 'i' }] }));
    expect(only.redact('alice, bob@x.io').text).toBe('[REDACTED:name], bob@x.io');
    expect(only.detectorIds).toEqual(['custom-name']);
  });
});
