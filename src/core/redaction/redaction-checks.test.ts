import { describe, expect, it } from 'vitest';
import { isAnonymousIpv4, isAnonymousIpv6, isIban, isIpv6, isPaymentCardNumber, looksRandom, passesLuhn } from './redaction-checks.js';

describe('redaction checks', () => {
  it('tells card numbers by network prefix and Luhn', () => {
    expect(passesLuhn('79927398713')).toBe(true);
    expect(passesLuhn('79927398710')).toBe(false);
    expect(isPaymentCardNumber('4111111111111111')).toBe(true);
    expect(isPaymentCardNumber('4111111111111112')).toBe(false);
    expect(isPaymentCardNumber('378282246310005')).toBe(true);
    // Luhn-valid, but no card network starts with 1: a timestamp.
    expect(isPaymentCardNumber('1000000000009')).toBe(false);
  });

  it('checks IBANs by country length and mod 97', () => {
    expect(isIban('DE89 3704 0044 0532 0130 00')).toBe(true);
    expect(isIban('GB82WEST12345698765432')).toBe(true);
    expect(isIban('DE89 3704 0044 0532 0130 01')).toBe(false);
    expect(isIban('DE89370400440532013')).toBe(false);
  });

  it('keeps addresses that identify no one', () => {
    expect(isAnonymousIpv4('127.0.0.1')).toBe(true);
    expect(isAnonymousIpv4('0.0.0.0')).toBe(true);
    expect(isAnonymousIpv4('255.255.255.0')).toBe(true);
    expect(isAnonymousIpv4('255.0.255.0')).toBe(false);
    expect(isAnonymousIpv4('10.0.0.1')).toBe(false);
    expect(isIpv6('2001:db8::1')).toBe(true);
    expect(isIpv6('fe80:0:0:0:0:0:0:1')).toBe(true);
    expect(isIpv6('12:30:45')).toBe(false);
    expect(isIpv6('1::2::3')).toBe(false);
    expect(isAnonymousIpv6('::1')).toBe(true);
    expect(isAnonymousIpv6('::')).toBe(true);
    expect(isAnonymousIpv6('2001:db8::1')).toBe(false);
  });

  it('tells generated values from words and small numbers', () => {
    expect(looksRandom('9f86d081884c7d659a2feaa0c55ad015')).toBe(true);
    expect(looksRandom('Bearer')).toBe(false);
    expect(looksRandom('1024')).toBe(false);
    expect(looksRandom('production')).toBe(false);
  });
});
