import { describe, expect, it } from 'vitest';
import { logprobTemperatureOf } from './logprob-temperature.js';

describe('logprobTemperatureOf', () => {
  it('is the sampling temperature, and the plain softmax for greedy decoding', () => {
    expect(logprobTemperatureOf({ temperature: 0.7 })).toBe(0.7);
    expect(logprobTemperatureOf({ temperature: 1.3 })).toBe(1.3);
    expect(logprobTemperatureOf({ temperature: 0 })).toBe(1);
  });
});
