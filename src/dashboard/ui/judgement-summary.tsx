/**
 * A turn's score and why, as the session and turn pages show it: where the score came from (the
 * judge, feedback or a rollout's reward, with the feedback's text), each vote's verdict text, the
 * hint answers with the candidate kept and why the others were not, and the sample the turn became.
 */
import type { FeedbackView, JudgementView, SampleView, VoteView } from '../../gateway/admin/dashboard-api.js';

/** Verdicts longer than this (or on several lines) are folded to their beginning. */
const foldedLength = 160;

function scoreClass(score: number | null): string {
  if (score === null) return 'score';
  return score > 0 ? 'score good' : score < 0 ? 'score bad' : 'score';
}

function signed(score: number | null): string {
  return score === null ? '?' : `${score > 0 ? '+' : ''}${score}`;
}

function VoteText(props: { text: string }) {
  const { text } = props;
  if (text.length <= foldedLength && !text.includes('\n')) return <span class="vote-text">{text}</span>;
  return (
    <details class="vote-text">
      <summary>
        {text.slice(0, foldedLength).replace(/\s+/g, ' ')}… <span class="muted">({text.length.toLocaleString('en')} characters)</span>
      </summary>
      <div class="message">{text}</div>
    </details>
  );
}

function ScoreSource(props: { judgement: JudgementView; feedback: FeedbackView | null }) {
  const { judgement, feedback } = props;
  const overridden = judgement.scoreSource !== 'judge' && judgement.votes.length > 0 ? `; the judge said ${signed(judgement.judgeScore)}` : '';
  if (judgement.scoreSource === 'rollout' && feedback?.rollout != null) {
    const rollout = feedback.rollout;
    const process = rollout.processReward === null ? '' : ` + process ${rollout.processReward}`;
    return <span class="muted"> (rollout reward: outcome {rollout.outcomeReward}{process}; {rollout.environment}, run {rollout.runId}, step {rollout.step}{overridden})</span>;
  }
  if (judgement.scoreSource === 'feedback') {
    return (
      <span class="muted">
        {' '}(feedback{feedback?.text == null ? '' : ': '}
        {feedback?.text == null ? null : <q data-testid="feedback-text">{feedback.text}</q>}
        {overridden})
      </span>
    );
  }
  return <span class="muted"> ({judgement.judge === 'feedback' ? 'judge' : judgement.judge}{feedback?.text == null ? '' : `; feedback: “${feedback.text}”`})</span>;
}

/** Each hint answer: the candidate it gave (kept or not, and why not) or why none was accepted. */
function HintAnswers(props: { votes: VoteView[]; kept: string | null; selection: string | null }) {
  const answers = props.votes.filter((vote) => vote.kind === 'hint');
  if (answers.length === 0) return null;
  const keptIndex = answers.findIndex((vote) => vote.hint !== null && vote.hint === props.kept);
  const notKept = props.selection === 'overlap' ? 'not kept: another overlapped the teacher more' : 'not kept: another was longer or more votes agreed on it';
  return (
    <ol class="votes" data-testid="hint-answers">
      {answers.map((vote, position) => (
        <li key={position} class={position === keptIndex ? 'vote kept' : 'vote'}>
          {vote.hint === null ? (
            <span class="rejected">rejected: {vote.rejection ?? 'no hint'}</span>
          ) : position === keptIndex ? (
            <span class="kept-label" data-testid="kept-hint">
              kept{props.selection === null ? '' : ` (${props.selection})`}: {vote.hint}
            </span>
          ) : (
            <span class="muted">
              {notKept}: {vote.hint}
            </span>
          )}{' '}
          <VoteText text={vote.text} />
        </li>
      ))}
    </ol>
  );
}

export function JudgementSummary(props: { judgement: JudgementView | null; sample: SampleView | null }) {
  const { judgement, sample } = props;
  const verdicts = judgement?.votes.filter((vote) => vote.kind === 'verdict') ?? [];
  const feedback = judgement?.feedback ?? null;
  return (
    <dl class="judging">
      <dt>score</dt>
      <dd>
        <span class={scoreClass(judgement?.score ?? null)} data-testid="turn-score">
          {judgement === null ? 'not judged' : judgement.score === null ? 'unreadable' : signed(judgement.score)}
        </span>
        {judgement === null ? null : <ScoreSource judgement={judgement} feedback={feedback} />}
      </dd>
      <dt>votes</dt>
      <dd>
        {verdicts.length === 0 ? (
          '–'
        ) : (
          <ol class="votes" data-testid="turn-votes">
            {verdicts.map((vote, position) => (
              <li key={position} class="vote">
                <span class={scoreClass(vote.score)}>{signed(vote.score)}</span> <VoteText text={vote.text} />
              </li>
            ))}
          </ol>
        )}
      </dd>
      <dt>hint</dt>
      <dd>
        <span data-testid="turn-hint">{judgement?.hint ?? '–'}</span>
        {feedback?.hint != null ? <span class="muted"> (from feedback)</span> : null}
        {judgement === null ? null : <HintAnswers votes={judgement.votes} kept={judgement.judgeHint} selection={judgement.hintSelection} />}
      </dd>
      <dt>sample</dt>
      <dd>{sample === null ? '–' : `${sample.method}, ${sample.status}${sample.dropReason === null ? '' : ` (${sample.dropReason})`}`}</dd>
    </dl>
  );
}
