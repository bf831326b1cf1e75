/**
 * Users and their memory (`docs/memory.md`): `GET /admin/users` lists the users with their counts;
 * `GET /admin/users/{user}/memory` lists a user's entries, `POST` adds a note (or a hint or feedback
 * entry), `PATCH /admin/users/{user}/memory/{id}` edits one and `DELETE` removes it. A user holds a
 * `/` (`tenant/name`): it may be sent as is or percent-encoded. The admin key reaches every user; a
 * tenant's key only its own (`tenant` and `tenant/...`), and another tenant's user is unknown (404),
 * as another tenant's turn is.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { defaultMemoryEntriesPerUser, memoryEntryTextOf, tenantOfUser } from '../../core/user-memory-text.js';
import { ClawrlError } from '../../spec/clawrl-error.js';
import { memoryEntryKinds, type MemoryEntryKind } from '../../spec/user-memory.js';
import { isUserName, readScopeOf, type GatewayVariables } from '../api-key-authenticator.js';
import type { GatewayContext } from '../gateway-context.js';
import { parseJsonBody } from '../parse-wire-request.js';
import type { RememberResponse, UserMemoryResponse, UsersResponse } from './dashboard-api.js';

/** The routes a tenant's key may use too (reads and edits), each on its own users only. */
export const tenantUserMemoryRoute = /^\/admin\/users(?:\/.+\/memory(?:\/[^/]+)?)?$/;

const textSchema = z.string().trim().min(1, 'text is empty').max(2_000);
const kindSchema = z.enum(memoryEntryKinds as [MemoryEntryKind, ...MemoryEntryKind[]]);
const addSchema = z.strictObject({ text: textSchema, kind: kindSchema.default('note') });
const editSchema = z.strictObject({ text: textSchema.optional(), kind: kindSchema.optional() }).refine((edit) => edit.text !== undefined || edit.kind !== undefined, {
  message: 'give text or kind',
  path: ['text'],
});

function parsed<Output>(schema: z.ZodType<Output>, body: string): Output {
  const validation = schema.safeParse(parseJsonBody(body));
  if (validation.success) return validation.data;
  const issue = validation.error.issues[0];
  const param = issue?.path.join('.') ?? '';
  throw new ClawrlError('invalid_request', `Invalid memory entry: ${param === '' ? '' : `${param}: `}${issue?.message ?? 'bad body'}`, param === '' ? {} : { param });
}

/** The user the path names, if the reader may reach it; else, as for a user that does not exist, 404. */
function userOf(c: Context<{ Variables: GatewayVariables }>): string {
  const user = c.req.param('user') ?? '';
  if (!isUserName(user)) throw new ClawrlError('invalid_request', `'${user.slice(0, 300)}' is no user: users are tenant/name or a tenant's name, of letters, digits and ._@+-.`, { param: 'user' });
  const scope = readScopeOf(c.get('principal'));
  // A tenant's key reaches its users' memory; a user's key only its own.
  if (scope !== undefined && (tenantOfUser(user) !== scope.tenant || (scope.user !== undefined && user !== scope.user))) throw new ClawrlError('not_found', `No user '${user.slice(0, 300)}'.`, { param: 'user' });
  return user;
}

function entryIdOf(c: Context): number {
  const id = Number(c.req.param('id'));
  if (!Number.isSafeInteger(id) || id < 1) throw new ClawrlError('invalid_request', 'A memory entry id is a positive integer.', { param: 'id' });
  return id;
}

/** The text as the memory keeps it: whitespace collapsed, cut to an entry's length (the schema let no blank text through). */
function entryText(text: string): string {
  return memoryEntryTextOf(text) ?? text;
}

export function registerUserMemoryRoutes(app: Hono<{ Variables: GatewayVariables }>, context: GatewayContext): void {
  const settings = () => context.userMemory ?? { mode: 'off' as const, maximumEntries: defaultMemoryEntriesPerUser, maximumTokens: 0 };
  const memoryPath = '/admin/users/:user{.+}/memory';

  app.get('/admin/users', async (c) => {
    const scope = readScopeOf(c.get('principal'));
    const response: UsersResponse = { object: 'list', data: await context.store.listUsers(scope === undefined ? {} : { tenant: scope.tenant }) };
    return c.json(response);
  });

  app.get(memoryPath, async (c) => {
    const user = userOf(c);
    const { mode, maximumEntries } = settings();
    const response: UserMemoryResponse = { object: 'list', user, mode, maximumEntries, data: await context.store.listMemory(user) };
    return c.json(response);
  });

  app.post(memoryPath, async (c) => {
    const user = userOf(c);
    const body = parsed(addSchema, await c.req.text());
    const result = await context.store.remember({ user, kind: body.kind, text: entryText(body.text), sourceTurnId: null, at: context.now() }, settings().maximumEntries);
    const response: RememberResponse = result;
    return c.json(response, result.outcome === 'added' ? 201 : 200);
  });

  app.patch(`${memoryPath}/:id`, async (c) => {
    const user = userOf(c);
    const id = entryIdOf(c);
    const body = parsed(editSchema, await c.req.text());
    const edit = { ...(body.text === undefined ? {} : { text: entryText(body.text) }), ...(body.kind === undefined ? {} : { kind: body.kind }) };
    const result = await context.store.editMemory(user, id, edit, context.now());
    if (result.outcome === 'missing') throw new ClawrlError('not_found', `No memory entry ${id} of user '${user}'.`, { param: 'id' });
    if (result.outcome === 'duplicate') throw new ClawrlError('invalid_request', `Entry ${result.existingId} of user '${user}' already says this.`, { param: 'text' });
    return c.json(result.entry);
  });

  app.delete(`${memoryPath}/:id`, async (c) => {
    const user = userOf(c);
    const id = entryIdOf(c);
    if (!(await context.store.forgetMemory(user, id))) throw new ClawrlError('not_found', `No memory entry ${id} of user '${user}'.`, { param: 'id' });
    return c.json({ id, deleted: true });
  });
}
