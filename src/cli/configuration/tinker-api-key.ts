/** The API key of a Tinker service: only from the environment, never a flag (a flag shows in `ps` and shell history). */
import { ClawrlError } from '../../spec/clawrl-error.js';

export function tinkerApiKeyOf(environment: Record<string, string | undefined>, usedBy: string): string {
  const key = environment.CLAWRL_TINKER_API_KEY;
  if (key === undefined || key === '') {
    throw new ClawrlError('configuration_error', `${usedBy} needs the service's API key in CLAWRL_TINKER_API_KEY (a self-hosted server that checks none, such as SkyRL's: tml-dummy)`, { param: 'tinkerUrl' });
  }
  return key;
}
