/** The wire shape of `POST /v1/feedback` (snake_case, as the OpenAI-style API around it). */
import { z } from 'zod';

export const feedbackRequestSchema = z.object({
  turn_id: z.string().min(1).optional(),
  session_id: z.string().min(1).optional(),
  score: z.number().min(-1).max(1).optional(),
  thumbs: z.enum(['up', 'down']).optional(),
  text: z.string().max(8_000).optional(),
  hint: z.string().optional(),
  /**
   * Sent by a rollout driver (`clawrl rollout`) or a manager instead of a score: where the turn came
   * from and its reward, never an advantage (the trainer forms those). `reward` is unbounded
   * (outcome + process); `group` names the rollouts the trainer compares it with at `turn_index`,
   * null for a rollout compared with none.
   */
  rollout: z
    .strictObject({
      run_id: z.string().min(1).max(200),
      environment: z.string().min(1).max(200),
      step: z.number().int().min(0),
      group: z.string().min(1).max(300).nullable(),
      turn_index: z.number().int().min(0),
      outcome_reward: z.number().finite(),
      process_reward: z.number().finite().nullable(),
      reward: z.number().finite(),
    })
    .optional(),
});

export type FeedbackRequest = z.infer<typeof feedbackRequestSchema>;

export interface FeedbackResponse {
  object: 'feedback';
  id: number;
  turn_id: string;
  session_id: string;
  score: number | null;
  text: string | null;
  hint: string | null;
  /** Present when a rollout driver or a manager sent the feedback. */
  rollout?: FeedbackRequest['rollout'];
  /** Whether the turn is queued to have its sample rebuilt (trainable main turns only). */
  queued: boolean;
  /**
   * Earlier feedback on the same turn, oldest first, that this one replaces for training (the
   * newest counts); empty for a turn's first feedback. They stay in `GET /admin/turns/{id}`.
   */
  replaced_feedback_ids: number[];
}
