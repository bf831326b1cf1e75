/** HTTP answers of a Tinker server as clawrl errors, shared by the client and the archive download. */
import { ClawrlError } from '../../spec/clawrl-error.js';
import { httpErrorBodySchema } from './tinker-api.js';

export interface HttpAnswer {
  status: number;
  body: unknown;
}

/** The message of an error body: FastAPI's `{detail}`, `{message}`, `{error}`, or the text itself. */
export function detailOf(body: unknown): string {
  const parsed = httpErrorBodySchema.safeParse(body);
  if (!parsed.success) return typeof body === 'string' ? body.slice(0, 300) : JSON.stringify(body)?.slice(0, 300) ?? '';
  const detail = parsed.data.detail ?? parsed.data.message ?? parsed.data.error;
  return typeof detail === 'string' ? detail : JSON.stringify(detail ?? body).slice(0, 300);
}

/** A 4xx that sending again cannot fix. */
export function clientErrorOf(path: string, answer: HttpAnswer): ClawrlError {
  const message = `Tinker ${path}: HTTP ${answer.status}: ${detailOf(answer.body)}`;
  if (answer.status === 401) return new ClawrlError('invalid_api_key', `${message} (check CLAWRL_TINKER_API_KEY)`);
  if (answer.status === 403) return new ClawrlError('permission_denied', message);
  if (answer.status === 404) return new ClawrlError('not_found', message);
  return new ClawrlError('invalid_request', message);
}

/** A body as JSON where it parses, else as text (a proxy's HTML error page). */
export async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  try {
    return text === '' ? null : (JSON.parse(text) as unknown);
  } catch {
    return text;
  }
}
