/**
 * The three tutoring tasks of the corpus and the simulated users: `solve` a word problem, `grade`
 * a student's solution (for a teaching assistant), `comment` on a student's work (for a teacher).
 * Each yields the user's message and the content a reply is written from, in any style.
 */
import type { SeededRandom } from '../../core/seeded-random.js';
import type { UserTask } from '../../builtin/user-preference.js';
import type { ReplyContent } from './reply-writer.js';
import {
  describeWork,
  generateWordProblem,
  namesOf,
  type CorpusSplit,
  type Mistake,
  type WordProblem,
} from '../../rollouts/environments/word-problems.js';

export interface TutorTask {
  task: UserTask;
  userMessage: string;
  problem: WordProblem;
  /** For grade and comment: the mistake in the student's work, null when it is correct. */
  mistake: Mistake | null;
  content: ReplyContent;
}

const sharedWarmOpeners = ['Excellent!', 'Well done!', 'Great job!', 'Nice work on this one!', 'Fantastic!'];
const sharedWarmClosers = [
  'Keep up the great work!',
  'You should be proud of this progress, fantastic effort!',
  'Wonderful effort, keep practising!',
  'Great job sticking with it!',
];

function solveTask(random: SeededRandom, split: CorpusSplit): TutorTask {
  const problem = generateWordProblem(random, split);
  const { question } = problem;
  const userMessage = random.pick([
    question,
    `Can you solve this? ${question}`,
    `Help me with this problem: ${question}`,
    `Solve this word problem. ${question}`,
    `I'm stuck on my homework. ${question}`,
  ]);
  return {
    task: 'solve',
    userMessage,
    problem,
    mistake: null,
    content: {
      core: problem.steps,
      details: [problem.goal, problem.method, problem.check],
      answer: problem.answer,
      answerLead: random.pick(['So the answer is', 'The answer is']),
      answerSentences: problem.answerSentences,
      neutralOpeners: ['Here is the solution.', 'Here is the working.', "Let's work through it."],
      warmOpeners: [...sharedWarmOpeners, 'What a wonderful question!', 'Brilliant question!'],
      warmClosers: sharedWarmClosers,
    },
  };
}

/** A correct or wrong student solution, about half each. */
function studentAttempt(random: SeededRandom, problem: WordProblem): { mistake: Mistake | null; work: string } {
  const mistake = problem.mistakes.length > 0 && random.chance(0.5) ? random.pick(problem.mistakes) : null;
  const work =
    mistake === null
      ? describeWork(random, problem.work, problem.answer)
      : describeWork(random, mistake.work, mistake.value);
  return { mistake, work };
}

function gradeTask(random: SeededRandom, split: CorpusSplit): TutorTask {
  const problem = generateWordProblem(random, split);
  const { mistake, work } = studentAttempt(random, problem);
  const { question, answer, lastExpression } = problem;
  const userMessage = random.pick([
    `Please grade this solution.\nProblem: ${question}\nSolution: ${work}`,
    `Grade the student's answer.\nProblem: ${question}\nStudent's answer: ${work}`,
    `Is this solution correct? Give grading comments.\nProblem: ${question}\nSolution: ${work}`,
  ]);
  const verdict = random.pick(mistake === null ? ['correct', 'right'] : ['incorrect', 'wrong']);
  const core: ReplyContent['core'] = [(m) => `The solution is ${m(verdict)}.`];
  const details = [problem.goal, problem.method, problem.check];
  if (mistake === null) {
    core.push((m) => `The student's working ${problem.work} is accurate and gives ${m(String(answer))}.`);
    details.push(
      'The working is written clearly and every number from the problem is used in the right place.',
      'I would give this full marks.',
      'The final result also matches the question that was asked.',
    );
  } else if (mistake.kind === 'slip') {
    core.push((m) => `The setup is right, but ${lastExpression} is ${m(String(answer))}, not ${mistake.value}.`);
    details.push(
      'Since the setup is right, the mistake is only in the arithmetic of the last step.',
      'I would give partial credit for the correct setup.',
      'A quick check of the result against the question would have caught this.',
    );
  } else {
    core.push(
      (m) =>
        `The student ${mistake.usedVerb}, but this problem needs ${mistake.needed}: ` +
        `${lastExpression} = ${m(String(answer))}.`,
    );
    details.push(
      'The numbers are taken from the problem correctly, but the operation does not match the story.',
      'I would give partial credit for reading the numbers correctly.',
      'Asking whether the amount should grow or shrink points to the right operation.',
    );
  }
  return {
    task: 'grade',
    userMessage,
    problem,
    mistake,
    content: {
      core,
      details,
      answer,
      answerLead: 'The correct answer is',
      answerSentences: [`The correct answer is ${answer}.`, ...problem.answerSentences],
      neutralOpeners: ['Here is my grading.', 'Here is the assessment.', 'Grading comments follow.'],
      warmOpeners: [...sharedWarmOpeners, 'What a wonderful attempt to grade!'],
      warmClosers: sharedWarmClosers,
    },
  };
}

function commentTask(random: SeededRandom, split: CorpusSplit): TutorTask {
  const problem = generateWordProblem(random, split);
  const { mistake, work } = studentAttempt(random, problem);
  const student = random.pick(namesOf(split).filter((name) => name !== problem.name));
  const { question, answer, lastExpression } = problem;
  const userMessage = random.pick([
    `Write a comment for my student ${student} on this work.\nProblem: ${question}\nStudent's work: ${work}`,
    `I'm a teacher. Please comment on ${student}'s homework.\nProblem: ${question}\n${student}'s answer: ${work}`,
    `Can you write feedback for ${student}?\nProblem: ${question}\nWork: ${work}`,
  ]);
  const core: ReplyContent['core'] = [];
  const details = [problem.goal];
  if (mistake === null) {
    core.push(
      (m) => `${student}, your answer of ${m(String(answer))} is correct.`,
      (m) => `You worked out ${lastExpression} = ${m(String(answer))} without any slips.`,
    );
    details.push(
      'You picked the right operation for the story.',
      'Your working is easy to follow because every step is written down.',
      'Try a harder problem of the same kind next.',
    );
  } else {
    const value = mistake.value;
    core.push((m) => `${student}, your answer of ${m(String(value))} is not quite right.`);
    if (mistake.kind === 'slip') {
      core.push((m) => `${lastExpression} is ${m(String(answer))}, so check the last calculation.`);
      details.push(
        'Your setup is right, so only the arithmetic needs another look.',
        'Redo the last step slowly and check it by working backwards.',
      );
    } else {
      core.push(
        (m) =>
          `You ${mistake.usedVerb}, but this problem needs ${mistake.needed}: ` +
          `${lastExpression} = ${m(String(answer))}.`,
      );
      details.push(
        'You took the right numbers from the story.',
        'Ask yourself whether the amount should grow or shrink before choosing the operation.',
      );
    }
  }
  details.push(problem.method, problem.check);
  return {
    task: 'comment',
    userMessage,
    problem,
    mistake,
    content: {
      core,
      details,
      answer,
      answerLead: 'The right answer is',
      answerSentences: [`The right answer is ${answer}.`, ...problem.answerSentences],
      neutralOpeners: ['Here is my feedback.', 'Feedback on this problem follows.', `Comment for ${student}:`],
      warmOpeners: [...sharedWarmOpeners, 'What a wonderful effort!', 'Well done! You gave this a real try.'],
      warmClosers: sharedWarmClosers,
    },
  };
}

export function buildTutorTask(task: UserTask, random: SeededRandom, split: CorpusSplit): TutorTask {
  switch (task) {
    case 'solve':
      return solveTask(random, split);
    case 'grade':
      return gradeTask(random, split);
    case 'comment':
      return commentTask(random, split);
  }
}
