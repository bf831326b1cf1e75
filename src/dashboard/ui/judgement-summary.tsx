/** A turn's score, votes, hint and sample, as the session and turn pages show them. */
import type { JudgementView, SampleView } from '../../gateway/admin/dashboard-api.js';

function scoreClass(score: number | null): string {
  if (score === null) return 'score';
  return score > 0 ? 'score good' : score < 0 ? 'score bad' : 'score';
}

export function JudgementSummary(props: { judgement: JudgementView | null; sample: SampleView | null }) {
  const { judgement, sample } = props;
  const verdicts = judgement?.votes.filter((vote) => vote.kind === 'verdict') ?? [];
  return (
    <dl class="judging">
      <dt>score</dt>
      <dd class={scoreClass(judgement?.score ?? null)} data-testid="turn-score">
        {judgement === null ? 'not judged' : judgement.score === null ? 'unreadable' : `${judgement.score > 0 ? '+' : ''}${judgement.score}`}
        {judgement === null ? null : <span class="muted"> ({judgement.judge})</span>}
      </dd>
      <dt>votes</dt>
      <dd>{verdicts.length === 0 ? '–' : verdicts.map((vote) => (vote.score === null ? '?' : vote.score > 0 ? '+1' : String(vote.score))).join(' ')}</dd>
      <dt>hint</dt>
      <dd data-testid="turn-hint">{judgement?.hint ?? '–'}</dd>
      <dt>sample</dt>
      <dd>{sample === null ? '–' : `${sample.method}, ${sample.status}${sample.dropReason === null ? '' : ` (${sample.dropReason})`}`}</dd>
    </dl>
  );
}
