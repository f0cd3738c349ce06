/** Helpers of the widget tests: a web deployment with widget settings, its key, visitor sessions. */
import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../src/container.js';
import { chatSetup, type ChatSetup } from './chat.js';

export interface WidgetSetup extends ChatSetup {
  key: string;
  snippet: string;
}

export const ORIGIN = 'https://shop.example.com';

/** An active web deployment of a builtin:kb agent with `config.widget` set through the API, and its key. */
export async function widgetSetup(
  app: FastifyInstance,
  container: Container,
  widget: Record<string, unknown> = {},
  options: { status?: 'active' | 'paused'; agent?: Record<string, unknown> } = {},
): Promise<WidgetSetup> {
  const setup = await chatSetup(app, container, options.agent ?? {}, { status: options.status ?? 'active' });
  const put = await app.inject({
    method: 'PUT',
    url: `/api/public/deployments/${setup.deploymentId}`,
    headers: setup.tenant.headers,
    payload: { config: JSON.stringify({ widget: { allowed_origins: [ORIGIN], ...widget } }) },
  });
  if (put.statusCode !== 200) throw new Error(`config: ${put.statusCode} ${put.body}`);
  const res = await app.inject({
    method: 'GET',
    url: `/api/public/deployments/${setup.deploymentId}/widget`,
    headers: setup.tenant.headers,
  });
  if (res.statusCode !== 200) throw new Error(`widget key: ${res.statusCode} ${res.body}`);
  const { key, snippet } = res.json<{ key: string; snippet: string }>();
  return { ...setup, key, snippet };
}

/** A visitor token of the widget (anonymous unless `identity` is given). */
export async function session(
  app: FastifyInstance,
  key: string,
  identity: Record<string, unknown> = {},
): Promise<{ visitor_token: string; visitor_id: string; identified: boolean; auth: { authorization: string } }> {
  const res = await app.inject({ method: 'POST', url: `/widget/v1/${key}/sessions`, payload: identity });
  if (res.statusCode !== 201) throw new Error(`session: ${res.statusCode} ${res.body}`);
  const body = res.json<{ visitor_token: string; visitor_id: string; identified: boolean }>();
  return { ...body, auth: { authorization: `Bearer ${body.visitor_token}` } };
}

export const userHash = (secret: string, userId: string) => createHmac('sha256', secret).update(userId).digest('hex');
