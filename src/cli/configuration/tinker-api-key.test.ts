import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { tinkerApiKeyOf } from './tinker-api-key.js';

describe('the Tinker trainer configuration', () => {
  it('reads the API key only from CLAWRL_TINKER_API_KEY, and says how to set it when it is missing', () => {
    expect(tinkerApiKeyOf({ CLAWRL_TINKER_API_KEY: 'tml-abc' }, '--trainer tinker')).toBe('tml-abc');
    for (const environment of [{}, { CLAWRL_TINKER_API_KEY: '' }, { TINKER_API_KEY: 'tml-abc' }]) {
      let caught: unknown;
      try {
        tinkerApiKeyOf(environment, '--engine tinker');
      } catch (error) {
        caught = error;
      }
      expect(ClawrlError.isInstance(caught) && caught.code === 'configuration_error' && caught.message.includes('CLAWRL_TINKER_API_KEY') && caught.message.startsWith('--engine tinker')).toBe(true);
    }
  });
});
