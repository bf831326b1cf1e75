/**
 * AdamW with decoupled weight decay, in PyTorch's order: θ ← θ·(1 − lr·λ), then the bias-corrected
 * Adam step θ ← θ − lr·m̂/(√v̂ + ε). tfjs's own `tf.train.adam` has no decoupled decay and keeps
 * its state out of reach (no save/restore), hence this one. State is keyed by parameter name, so
 * a parameter that changes shape (a new adapter of another rank) simply starts fresh.
 */
import * as tf from '@tensorflow/tfjs';
import { z } from 'zod';

export const adamWOptionsSchema = z.object({
  learningRate: z.number().positive(),
  beta1: z.number().min(0).lt(1).default(0.9),
  beta2: z.number().min(0).lt(1).default(0.999),
  epsilon: z.number().positive().default(1e-8),
  weightDecay: z.number().min(0).default(0),
  /** Clip the global gradient norm to this value first; undefined = no clipping. */
  maxGradientNorm: z.number().positive().optional(),
});

export type AdamWOptions = z.input<typeof adamWOptionsSchema>;

export interface AdamWStepResult {
  /** Global L2 norm of the gradients before clipping. */
  gradientNorm: number;
  step: number;
}

/** Moments in the parameters' own (stored) layout; only meaningful for the same model code. */
export interface AdamWState {
  stepCount: number;
  moments: Map<string, { first: { shape: number[]; data: Float32Array }; second: { shape: number[]; data: Float32Array } }>;
}

export interface AdamW {
  readonly options: z.output<typeof adamWOptionsSchema>;
  /** Steps taken so far. */
  readonly stepCount: number;
  /** Applies one update; `gradients` are not disposed (their owner clears them). */
  step(parameters: ReadonlyMap<string, tf.Variable>, gradients: ReadonlyMap<string, tf.Tensor>, learningRate?: number): AdamWStepResult;
  /** The step count and moments, to checkpoint a run and resume it exactly. */
  exportState(): Promise<AdamWState>;
  importState(state: AdamWState): void;
  dispose(): void;
}

interface Moments {
  first: tf.Tensor;
  second: tf.Tensor;
}

export function createAdamW(options: AdamWOptions): AdamW {
  const checked = adamWOptionsSchema.parse(options);
  const moments = new Map<string, Moments>();
  let stepCount = 0;
  return {
    options: checked,
    get stepCount() {
      return stepCount;
    },
    step(parameters, gradients, learningRate = checked.learningRate) {
      stepCount += 1;
      const { beta1, beta2, epsilon, weightDecay, maxGradientNorm } = checked;
      const squaredNorm = tf.tidy(() => {
        const parts = [...gradients.values()].map((gradient) => tf.sum(tf.square(gradient)));
        return parts.length === 0 ? tf.scalar(0) : tf.addN(parts);
      });
      const gradientNorm = Math.sqrt(squaredNorm.dataSync()[0] ?? 0);
      squaredNorm.dispose();
      const clip = maxGradientNorm !== undefined && gradientNorm > maxGradientNorm ? maxGradientNorm / (gradientNorm + 1e-6) : 1;
      const firstCorrection = 1 - beta1 ** stepCount;
      const secondCorrection = 1 - beta2 ** stepCount;
      for (const [name, parameter] of parameters) {
        const gradient = gradients.get(name);
        if (gradient === undefined) continue;
        let state = moments.get(name);
        if (state === undefined || state.first.shape.join() !== parameter.shape.join()) {
          if (state !== undefined) tf.dispose([state.first, state.second]);
          state = { first: tf.keep(tf.zerosLike(parameter)), second: tf.keep(tf.zerosLike(parameter)) };
          moments.set(name, state);
        }
        const previous = state;
        const next = tf.tidy(() => {
          const clipped = clip === 1 ? gradient : tf.mul(gradient, clip);
          const first = tf.add(tf.mul(previous.first, beta1), tf.mul(clipped, 1 - beta1));
          const second = tf.add(tf.mul(previous.second, beta2), tf.mul(tf.square(clipped), 1 - beta2));
          const decayed = weightDecay === 0 ? parameter : tf.mul(parameter, 1 - learningRate * weightDecay);
          const update = tf.div(tf.div(first, firstCorrection), tf.add(tf.sqrt(tf.div(second, secondCorrection)), epsilon));
          parameter.assign(tf.sub(decayed, tf.mul(update, learningRate)));
          return { first, second };
        });
        tf.dispose([previous.first, previous.second]);
        moments.set(name, next);
      }
      return { gradientNorm, step: stepCount };
    },
    async exportState() {
      const exported: AdamWState['moments'] = new Map();
      for (const [name, state] of moments) {
        exported.set(name, {
          first: { shape: state.first.shape.slice(), data: new Float32Array(await state.first.data()) },
          second: { shape: state.second.shape.slice(), data: new Float32Array(await state.second.data()) },
        });
      }
      return { stepCount, moments: exported };
    },
    importState(state) {
      for (const previous of moments.values()) tf.dispose([previous.first, previous.second]);
      moments.clear();
      for (const [name, { first, second }] of state.moments) {
        moments.set(name, { first: tf.tensor(first.data, first.shape, 'float32'), second: tf.tensor(second.data, second.shape, 'float32') });
      }
      stepCount = state.stepCount;
    },
    dispose() {
      for (const state of moments.values()) tf.dispose([state.first, state.second]);
      moments.clear();
    },
  };
}
