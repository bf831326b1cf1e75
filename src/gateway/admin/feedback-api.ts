/** The wire shape of `POST /v1/feedback` (snake_case, as the OpenAI-style API around it). */
import { z } from 'zod';

export const feedbackRequestSchema = z.object({
  turn_id: z.string().min(1).optional(),
  session_id: z.string().min(1).optional(),
  score: z.number().min(-1).max(1).optional(),
  thumbs: z.enum(['up', 'down']).optional(),
  text: z.string().max(8_000).optional(),
  hint: z.string().optional(),
  /** Sent by a rollout driver (`clawrl rollout`): the turn's group and the rewards its score was formed from. */
  rollout: z
    .object({
      run_id: z.string().min(1).max(200),
      environment: z.string().min(1).max(200),
      step: z.number().int().min(0),
      group: z.string().min(1).max(300),
      outcome_reward: z.number(),
      process_reward: z.number().nullable(),
      reward: z.number(),
      advantage: z.number().nullable(),
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
  /** Present when a rollout driver sent the feedback. */
  rollout?: FeedbackRequest['rollout'];
  /** Whether the turn is queued to have its sample rebuilt (trainable main turns only). */
  queued: boolean;
  /**
   * Earlier feedback on the same turn, oldest first, that this one replaces for training (the
   * newest counts); empty for a turn's first feedback. They stay in `GET /admin/turns/{id}`.
   */
  replaced_feedback_ids: number[];
}
