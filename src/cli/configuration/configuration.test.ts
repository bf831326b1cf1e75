import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { commandSchemas, configurationSections, recipeSchema } from './configuration-schema.js';
import { environmentVariableOf, flattenConfigFile, optionSpecifications, resolveConfiguration } from './configuration.js';

const { gateway, storage, trainer, engine } = configurationSections;
const serverSchema = z.object({ port: gateway.shape.port, host: gateway.shape.host, data: storage.shape.data, trainEvery: trainer.shape.trainEvery });

describe('configuration', () => {
  it('resolves flag > config file > environment > recipe > default', () => {
    const { configuration } = resolveConfiguration(serverSchema, {
      flags: { port: '9000' },
      file: { port: 9100, host: '0.0.0.0' },
      environment: { CLAWRL_PORT: '9200', CLAWRL_HOST: '10.0.0.1', CLAWRL_DATA: '/tmp/data' },
    });
    expect(configuration).toEqual({ port: 9000, host: '0.0.0.0', data: '/tmp/data', trainEvery: 16 });
    const withRecipe = (sources: { flags?: Record<string, unknown>; environment?: Record<string, string> }) =>
      resolveConfiguration(serverSchema, { flags: sources.flags ?? {}, file: {}, environment: sources.environment ?? {}, recipe: { trainEvery: 4 } }).configuration.trainEvery;
    expect(withRecipe({})).toBe(4);
    expect(withRecipe({ environment: { CLAWRL_TRAIN_EVERY: '8' } })).toBe(8);
    expect(withRecipe({ flags: { trainEvery: '2' } })).toBe(2);
  });

  it('takes recipe settings from the recipe only, with their defaults', () => {
    const { configuration } = resolveConfiguration(commandSchemas.trainer, { flags: {}, file: {}, environment: { CLAWRL_ANCHOR_COEFFICIENT: '3' }, recipe: { anchorCoefficient: 0.5 } });
    expect([configuration.anchorCoefficient, configuration.anchorTopK, configuration.rewardBaseline, configuration.trainEpochs]).toEqual([0.5, 8, 'none', 1]);
    expect(() => recipeSchema.parse({ anchorCoefficient: 0.5, port: 1 })).toThrow();
  });

  it('gives every option with a flag a CLAWRL_ variable named after its flag, and unique keys', () => {
    expect(environmentVariableOf('port')).toBe('CLAWRL_PORT');
    expect(environmentVariableOf('trainEvery')).toBe('CLAWRL_TRAIN_EVERY');
    expect(environmentVariableOf('noTrain')).toBe('CLAWRL_NO_TRAIN');
    expect(environmentVariableOf('servedModelName')).toBe('CLAWRL_SERVED_MODEL_NAME');
    expect(environmentVariableOf('anchorCoefficient')).toBeUndefined();
    const flagged = optionSpecifications.filter((option) => option.flag !== undefined);
    const names = flagged.map((option) => option.environment);
    expect(new Set(names).size).toBe(names.length);
    const keys = optionSpecifications.map((option) => option.key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('keeps experiment-only settings and llamacpp off serve', () => {
    const serveFlags = Object.keys(commandSchemas.serve.shape).flatMap((key) => optionSpecifications.find((option) => option.key === key)?.flag ?? []);
    for (const flag of ['--anchor-coefficient', '--anchor-top-k', '--opd-support-k', '--reward-baseline', '--train-epochs', '--learning-rate-half-life', '--judge-weights', '--judge-hint-grounding']) {
      expect(serveFlags.some((declared) => declared.startsWith(`${flag} `) || declared === flag)).toBe(false);
    }
    expect(engine.shape.engine.safeParse('llamacpp').success).toBe(false);
  });

  it('coerces lists and booleans from the environment', () => {
    const schema = z.object({ apiKey: gateway.shape.apiKey, noTrain: trainer.shape.noTrain });
    const { configuration } = resolveConfiguration(schema, {
      flags: {},
      file: {},
      environment: { CLAWRL_API_KEY: 'alice=aaaaaaaaaa, bob=bbbbbbbbbb', CLAWRL_NO_TRAIN: 'yes' },
    });
    expect(configuration).toEqual({ apiKey: ['alice=aaaaaaaaaa', 'bob=bbbbbbbbbb'], noTrain: true });
  });

  it('names the option and its variable in errors', () => {
    const attempt = () => resolveConfiguration(serverSchema, { flags: {}, file: {}, environment: { CLAWRL_PORT: 'eighty' } });
    expect(attempt).toThrowError(/--port \(CLAWRL_PORT\)/);
    try {
      attempt();
    } catch (error) {
      expect(ClawrlError.isInstance(error) && error.code).toBe('configuration_error');
    }
    expect(() => resolveConfiguration(commandSchemas.gateway, { flags: { engine: 'llamacpp' }, file: {}, environment: {} })).toThrowError(/--engine \(CLAWRL_ENGINE\)/);
  });

  it('reads a config file flat or nested by component, and refuses unknown keys', () => {
    expect(flattenConfigFile({ port: 1, trainer: { trainEvery: 4 }, engine: { model: 'x' } })).toEqual({ port: 1, trainEvery: 4, model: 'x' });
    expect(() => flattenConfigFile({ prot: 1 })).toThrowError(/prot/);
    expect(() => flattenConfigFile({ gateway: { trainEvery: 4 } })).toThrowError(/gateway\.trainEvery/);
    expect(() => flattenConfigFile({ anchorCoefficient: 0.5 })).toThrowError(/recipe/);
  });

  it('still reads the advantage weights under the component they were in before the trainer took them', () => {
    expect(flattenConfigFile({ learning: { rlWeight: 0.5, opdWeight: 2 }, trainer: { opdClip: 2 } })).toEqual({ rlWeight: 0.5, opdWeight: 2, opdClip: 2 });
    const file = flattenConfigFile({ learning: { rlWeight: 0.5 } });
    expect(resolveConfiguration(commandSchemas.trainer, { flags: {}, file, environment: {} }).configuration).toMatchObject({ rlWeight: 0.5, opdWeight: 1, opdClip: 1, loss: 'decoupled_ppo' });
    expect(() => flattenConfigFile({ learning: { opdClip: 2 } })).toThrowError(/learning\.opdClip/);
    // A recipe sets them as before, and the new trainer options too.
    expect(recipeSchema.parse({ rlWeight: 0.5, opdWeight: 2, opdClip: 0.5, loss: 'ppo' })).toEqual({ rlWeight: 0.5, opdWeight: 2, opdClip: 0.5, loss: 'ppo' });
  });

  it("lets each command ignore, and name, the keys of another component's", () => {
    const file = flattenConfigFile({ gateway: { port: 9000 }, trainer: { trainEvery: 4 }, judge: { judge: 'rules' } });
    const gatewayCommand = resolveConfiguration(commandSchemas.gateway, { flags: {}, file, environment: {} });
    expect(gatewayCommand.configuration.port).toBe(9000);
    expect(gatewayCommand.ignoredFileKeys).toEqual(['trainEvery', 'judge']);
    const judgeCommand = resolveConfiguration(commandSchemas.judge, { flags: {}, file, environment: {} });
    expect(judgeCommand.configuration.judge).toBe('rules');
    expect(judgeCommand.ignoredFileKeys).toEqual(['port', 'trainEvery']);
    expect(resolveConfiguration(commandSchemas.serve, { flags: {}, file, environment: {} }).ignoredFileKeys).toEqual([]);
  });
});
