/**
 * The LoRA deltas of a batch whose rows belong to several adapters (requests of several policy
 * versions in one continuous-batching step), in a fixed number of operations per module whatever
 * the number of adapters — on CPU at these sizes an operation's fixed cost, not its flops, is what
 * a loop over adapters would multiply:
 *
 *   delta = ((x · A_cat) ⊙ M) · B_cat
 *
 * A_cat [in, Σr] puts the adapters' A side by side and B_cat [Σr, out] stacks their B; M [N, Σr]
 * holds, on each row, its own adapter's scale over that adapter's columns and zero elsewhere. Row n
 * of adapter s so gets scale_s · (x_n·A_s)·B_s, the other adapters' columns contributing exact
 * zeros, and a row of the base model gets a zero delta: the values it gets alone, to float rounding
 * (`multi-adapter-batching.test.ts` holds them to 1e-4). This is Punica's and S-LoRA's gathering of
 * each row's adapter, written as two dense matmuls. A_cat and B_cat are kept from step to step while
 * the batch's adapters stay the same, as they do across decode steps.
 *
 * The masked form computes every row against every adapter's A and B, S times the flops of the
 * deltas themselves; for rank-16 adapters on the built-in model's decode steps that cost 5–10% of
 * a base step's CPU time (8 requests of 8 adapters against 8 of the base). Stacking the factors as
 * [S, in, r] and meeting each row with its own in one batched matmul pair (Punica's BGMV, no wasted
 * flops) measured slower: tfjs-wasm's BatchMatMul runs one XNNPACK call per batch entry.
 */
import * as tf from '@tensorflow/tfjs';
import type { LoraAdapter } from './lora-adapter.js';

/** Consecutive activation rows `start .. start+length-1` that share one adapter (null: none). */
export interface LoraSegment {
  start: number;
  length: number;
  adapter: LoraAdapter | null;
}

/** A module's adapters side by side, for one set of adapters. */
interface ModuleStack {
  a: tf.Tensor2D;
  b: tf.Tensor2D;
  /** Each stacked adapter's first column and rank. */
  columns: Map<LoraAdapter, { start: number; rank: number }>;
  /** Which adapters are stacked: the mask cache's key. */
  signature: string;
}

/** A_cat and B_cat per module for the current set of adapters (owned by a batcher; dispose with it). */
export interface LoraStacks {
  stackOf(adapters: readonly LoraAdapter[], path: string): ModuleStack | null;
  dispose(): void;
}

/** The rows' segments of one forward, with the stacks to use and this forward's masks. */
export interface LoraBatch {
  segments: readonly LoraSegment[];
  stacks: LoraStacks;
  /** Masks by stack signature, made once per forward (they depend only on the rows). */
  masks: Map<string, tf.Tensor2D>;
}

export function createLoraStacks(): LoraStacks {
  let current: readonly LoraAdapter[] = [];
  const byPath = new Map<string, ModuleStack | null>();
  const clear = () => {
    for (const stack of byPath.values()) if (stack !== null) tf.dispose([stack.a, stack.b]);
    byPath.clear();
  };
  return {
    stackOf(adapters, path) {
      if (adapters.length !== current.length || adapters.some((adapter, index) => adapter !== current[index])) {
        clear();
        current = [...adapters];
      }
      if (byPath.has(path)) return byPath.get(path) ?? null;
      const present = adapters.filter((adapter) => adapter.modules.has(path));
      let stack: ModuleStack | null = null;
      if (present.length > 0) {
        const columns = new Map<LoraAdapter, { start: number; rank: number }>();
        let start = 0;
        for (const adapter of present) {
          const rank = adapter.modules.get(path)?.a.shape[1] ?? 0;
          columns.set(adapter, { start, rank });
          start += rank;
        }
        // Kept beyond the step's tidy scope: the next steps reuse them.
        const a = tf.keep(tf.concat(present.map((adapter) => adapter.modules.get(path)?.a as tf.Tensor2D), 1));
        const b = tf.keep(tf.concat(present.map((adapter) => adapter.modules.get(path)?.b as tf.Tensor2D), 0));
        stack = { a, b, columns, signature: present.map((adapter) => adapters.indexOf(adapter)).join(',') };
      }
      byPath.set(path, stack);
      return stack;
    },
    dispose() {
      clear();
      current = [];
    },
  };
}

function maskOf(batch: LoraBatch, stack: ModuleStack, rows: number): tf.Tensor2D {
  const kept = batch.masks.get(stack.signature);
  if (kept !== undefined) return kept;
  const width = stack.b.shape[0];
  const values = new Float32Array(rows * width);
  for (const segment of batch.segments) {
    const place = segment.adapter === null ? undefined : stack.columns.get(segment.adapter);
    if (segment.adapter === null || place === undefined) continue;
    for (let row = segment.start; row < segment.start + segment.length; row += 1) {
      values.fill(segment.adapter.scale, row * width + place.start, row * width + place.start + place.rank);
    }
  }
  const mask = tf.tensor2d(values, [rows, width]);
  batch.masks.set(stack.signature, mask);
  return mask;
}

/** Each row's own adapter's delta for the module at `path`, or null when no row's adapter adapts it. */
export function segmentedLoraDelta(x: tf.Tensor2D, batch: LoraBatch, path: string): tf.Tensor2D | null {
  const adapters: LoraAdapter[] = [];
  for (const segment of batch.segments) if (segment.adapter !== null && !adapters.includes(segment.adapter)) adapters.push(segment.adapter);
  if (adapters.length === 0) return null;
  const stack = batch.stacks.stackOf(adapters, path);
  if (stack === null) return null;
  return tf.matMul(tf.mul(tf.matMul(x, stack.a), maskOf(batch, stack, x.shape[0])), stack.b) as tf.Tensor2D;
}
