/**
 * The checks that tell a secret or a personal number from its look-alikes once a pattern has
 * matched: checksums (payment cards, IBANs), how random a string looks, and which addresses are
 * nobody's (loopback, unspecified, masks). Pure functions; the detectors call them.
 */

/** The Luhn check every payment card number passes (and 90% of random digit strings fail). */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index -= 1) {
    let digit = digits.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) return false;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** Card numbers start with a network's prefix; a Luhn-valid number that starts otherwise is an ordinary number. */
const cardPrefix = /^(?:4|5[1-5]|2[2-7]|3[47]|3[068]|6(?:011|5|4[4-9]|22)|35|62)/;

/** A payment card number: 13–19 digits, a card network's prefix, Luhn-valid. */
export function isPaymentCardNumber(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && cardPrefix.test(digits) && passesLuhn(digits);
}

/** IBAN lengths by country (ISO 13616 registry), so a random mod-97 pass of the wrong length stays. */
const ibanLengths: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, CH: 21, CR: 22, CY: 28, CZ: 24,
  DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27,
  GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LI: 21, LT: 20, LU: 20,
  LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25,
  QA: 29, RO: 24, RS: 22, SA: 24, SE: 24, SI: 19, SK: 24, SM: 27, TN: 24, TR: 26, UA: 29, VG: 24, XK: 20,
};

/** An IBAN (spaces allowed): its country's length and the ISO 7064 mod-97 check. */
export function isIban(text: string): boolean {
  const compact = text.replace(/ /g, '').toUpperCase();
  if (ibanLengths[compact.slice(0, 2)] !== compact.length) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const character of rearranged) {
    const code = character.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : character;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

/** Shannon entropy in bits per character. */
export function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const character of text) counts.set(character, (counts.get(character) ?? 0) + 1);
  let entropy = 0;
  for (const count of counts.values()) {
    const share = count / text.length;
    entropy -= share * Math.log2(share);
  }
  return entropy;
}

/**
 * A value that looks generated rather than written: long enough, several character classes, and
 * spread out. Used only beside a secret-like name, where a random-looking value is the secret.
 */
export function looksRandom(value: string): boolean {
  if (value.length < 8) return false;
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((pattern) => pattern.test(value)).length;
  if (/^[0-9]+$/.test(value)) return value.length >= 16;
  return classes >= 2 && shannonEntropy(value) >= 2.8;
}

/** Subnet masks (255.255.255.0) are configuration, not anybody's address. */
const maskOctets = new Set([0, 128, 192, 224, 240, 248, 252, 254, 255]);

/**
 * IPv4 addresses that identify no one stay: loopback (127/8), unspecified (0.0.0.0), broadcast
 * and subnet masks. Private and documentation ranges are redacted like any other: they map a
 * user's network.
 */
export function isAnonymousIpv4(address: string): boolean {
  const octets = address.split('.').map(Number);
  if (octets[0] === 127 || octets.every((octet) => octet === 0)) return true;
  let seenBelow255 = false;
  for (const octet of octets) {
    if (!maskOctets.has(octet)) return false;
    if (octet !== 255) seenBelow255 = true;
    else if (seenBelow255) return false;
  }
  return octets[0] === 255;
}

/** A syntactically valid IPv6 address (hex groups of 1–4, at most one `::`, eight groups in all). */
export function isIpv6(text: string): boolean {
  const halves = text.split('::');
  if (halves.length > 2) return false;
  const groupsOf = (half: string): string[] | null => {
    if (half === '') return [];
    const groups = half.split(':');
    return groups.every((group) => /^[0-9a-fA-F]{1,4}$/.test(group)) ? groups : null;
  };
  const left = groupsOf(halves[0] ?? '');
  const right = halves.length === 2 ? groupsOf(halves[1] ?? '') : [];
  if (left === null || right === null) return false;
  const count = left.length + right.length;
  return halves.length === 2 ? count <= 7 : count === 8;
}

/** `::1` and `::` are every machine's; they stay. */
export function isAnonymousIpv6(text: string): boolean {
  return /^(?:0{0,4}:){0,7}:?0{0,4}1?$/.test(text) && /^[0:]*1?$/.test(text);
}
