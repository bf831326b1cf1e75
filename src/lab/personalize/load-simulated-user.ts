/**
 * Resolves `--user`: a built-in user by name (student, ta, teacher) or a path to a JSON file in
 * the simulated-user format of the design brief §3. A bad file is a configuration error that
 * names the file and every problem in it.
 */
import { readFileSync } from 'node:fs';
import { builtinUserNames, builtinUsers, parseSimulatedUser, type BuiltinUserName, type SimulatedUser } from '../../builtin/user-preference.js';
import { ClawrlError } from '../../spec/clawrl-error.js';

function isBuiltinUserName(reference: string): reference is BuiltinUserName {
  return (builtinUserNames as readonly string[]).includes(reference);
}

export function loadSimulatedUser(reference: string): SimulatedUser {
  if (isBuiltinUserName(reference)) return builtinUsers[reference];
  let text: string;
  try {
    text = readFileSync(reference, 'utf8');
  } catch (error) {
    throw new ClawrlError(
      'configuration_error',
      `--user must be ${builtinUserNames.join(', ')} or a user JSON file; cannot read ${reference}: ${(error as Error).message}`,
      { param: 'user', cause: error },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ClawrlError('configuration_error', `The user file ${reference} is not valid JSON: ${(error as Error).message}`, { param: 'user', cause: error });
  }
  const result = parseSimulatedUser(parsed);
  if (!result.ok) {
    throw new ClawrlError('configuration_error', `The user file ${reference} is not a simulated-user spec:\n  ${result.issues.join('\n  ')}`, { param: 'user' });
  }
  return result.user;
}
