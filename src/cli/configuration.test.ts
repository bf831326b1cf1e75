import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import { environmentVariableOf, optionSpecifications, resolveConfiguration } from './configuration.js';

describe('configuration', () => {
  it('resolves flag > config file > environment > default', () => {
    const keys = ['port', 'host', 'data', 'trainEvery'] as const;
    const resolved = resolveConfiguration(keys, {
      flags: { port: '9000' },
      file: { port: 9100, host: '0.0.0.0' },
      environment: { CLAWRL_PORT: '9200', CLAWRL_HOST: '10.0.0.1', CLAWRL_DATA: '/tmp/data' },
    });
    expect(resolved).toEqual({ port: 9000, host: '0.0.0.0', data: '/tmp/data', trainEvery: 16 });
  });

  it('gives every option a CLAWRL_ variable named after its flag', () => {
    expect(environmentVariableOf('port')).toBe('CLAWRL_PORT');
    expect(environmentVariableOf('trainEvery')).toBe('CLAWRL_TRAIN_EVERY');
    expect(environmentVariableOf('noTrain')).toBe('CLAWRL_NO_TRAIN');
    const names = optionSpecifications.map((option) => environmentVariableOf(option.key));
    expect(new Set(names).size).toBe(names.length);
  });

  it('coerces lists and booleans from the environment', () => {
    const resolved = resolveConfiguration(['apiKey', 'noTrain'] as const, {
      flags: {},
      file: {},
      environment: { CLAWRL_API_KEY: 'alice=aaaaaaaaaa, bob=bbbbbbbbbb', CLAWRL_NO_TRAIN: 'yes' },
    });
    expect(resolved).toEqual({ apiKey: ['alice=aaaaaaaaaa', 'bob=bbbbbbbbbb'], noTrain: true });
  });

  it('names the option and its variable in errors', () => {
    const attempt = () => resolveConfiguration(['port'] as const, { flags: {}, file: {}, environment: { CLAWRL_PORT: 'eighty' } });
    expect(attempt).toThrowError(/--port \(CLAWRL_PORT\)/);
    try {
      attempt();
    } catch (error) {
      expect(ClawrlError.isInstance(error) && error.code).toBe('configuration_error');
    }
    expect(() => resolveConfiguration(['engine'] as const, { flags: { engine: 'torch' }, file: {}, environment: {} })).toThrowError(
      /--engine \(CLAWRL_ENGINE\)/,
    );
  });

  it('rejects unknown keys in the config file', () => {
    expect(() => resolveConfiguration(['port'] as const, { flags: {}, file: { prot: 1 }, environment: {} })).toThrowError(/prot/);
  });
});
