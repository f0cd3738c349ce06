/**
 * Connectors: what the platform needs of each third-party product an integration connects to
 * (DESIGN §10). One definition per integration `type`; the integrations module keeps them in a
 * registry that is the single source of the types listed, of config validation and of the tools
 * agents get. Adapters under src/adapters/connectors/ implement them.
 */
import type { TObject, TSchema } from '@sinclair/typebox';

/** The team-notification type written when an agent uses a tool (DESIGN §10). */
export type ToolNotificationKind = 'email_sent' | 'slack_message' | 'api_call' | 'tool_usage';

/** A vendor call failed. The message names the vendor and says what happened; it never holds a secret. */
export class ConnectorError extends Error {
  override readonly name = 'ConnectorError';
  /** The vendor's product name, e.g. `Slack`. */
  readonly vendor: string;
  /** The vendor's HTTP status (or SMTP reply code); undefined when no answer came. */
  readonly status: number | undefined;
  /** Whether the same call may succeed later (rate limits, 5xx, time-outs, lost connections). */
  readonly retryable: boolean;
  /** How long the vendor asked to wait before retrying (Retry-After, throttle status), in ms. */
  readonly retryAfterMs: number | undefined;
  /** The vendor's own error code when it gave one (`invalid_auth`, `THROTTLED`, `EAUTH` …). */
  readonly code: string | undefined;

  constructor(
    vendor: string,
    message: string,
    options: { status?: number; retryable: boolean; retryAfterMs?: number; code?: string },
  ) {
    super(`${vendor}: ${message}`);
    this.vendor = vendor;
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.code = options.code;
  }
}

/** What a connector call gets: the integration's config with its secrets in clear, and a signal. */
export interface ConnectorContext<C = Record<string, unknown>> {
  /** The stored config, validated against the definition's schema, secrets decrypted. */
  config: C;
  /** Aborts the call (the caller's time limit, a client gone); every vendor call honours it. */
  signal: AbortSignal;
}

/** A tool a server said it has (an MCP server's `tools/list`), cached with the integration. */
export interface DiscoveredTool {
  name: string;
  description: string;
  /** JSON schema of the tool's input, as the server gave it. */
  inputSchema: Record<string, unknown>;
}

/** The outcome of a successful `test()`: a sentence for the user (`Connected to Slack team Acme`). */
export interface ConnectorTestOutcome {
  detail: string;
  /** The tools the server listed (kinds whose tools come from the server: MCP); cached with the integration. */
  tools?: DiscoveredTool[];
}

/** What a tool returns: data for the model or the rule, and a one-line summary for people. */
export interface ToolOutcome {
  /** One line for the chat stream and the notification (`Order #1042: fulfilled, tracking 1Z…`). */
  summary: string;
  /** Structured result handed to the model as data (never executed). */
  data: unknown;
}

/** One action an agent may take through an integration. */
export interface ConnectorTool<C = Record<string, unknown>> {
  /** Unique within the connector, lowercase with underscores (`post_message`). */
  name: string;
  /** What the tool does, written for the model choosing it. */
  description: string;
  /** JSON schema of the input the model must send. */
  input: TSchema;
  /** The team-notification type each call writes. */
  notification: ToolNotificationKind;
  /** Runs the tool with validated input; throws ConnectorError on a vendor failure. */
  run(input: Record<string, unknown>, context: ConnectorContext<C>): Promise<ToolOutcome>;
}

/** One integration kind: its config, its live check and its tools. */
export interface ConnectorDefinition<C = Record<string, unknown>> {
  /** The wire value of `type` (`slack`, `shopify`, …). */
  type: string;
  /** The product's name, for `GET /integrations/types`. */
  name: string;
  /** One sentence: what an agent can do with it. */
  description: string;
  /** Whether `GET /integrations/types` lists it (business messaging and ERP are not listed). */
  listed: boolean;
  /** Schema of `config`: required keys, their types and bounds; unknown keys are refused. */
  config: TObject;
  /** Config keys holding credentials: encrypted at rest, masked in every response. */
  secretKeys: readonly string[];
  /**
   * Rules the schema cannot say (a key required by another's value, a real time zone): the
   * problem as `{ key, problem }`, or undefined when the config is valid. Runs after the schema.
   */
  refine?(config: Record<string, unknown>): { key: string; problem: string } | undefined;
  /** A cheap authenticated call; resolves with a sentence, throws ConnectorError on failure. */
  test(context: ConnectorContext<C>): Promise<ConnectorTestOutcome>;
  /**
   * The tools an agent gets from an integration with this config (may depend on it, e.g.
   * custom_api), and on the tools its server listed at the last live check (MCP).
   */
  tools(config: C, discovered?: readonly DiscoveredTool[] | null): ConnectorTool<C>[];
}

/**
 * One tool an agent may call, as a model is offered it: a connector tool of one of the agent's
 * integrations under a provider-safe name (its secrets stay with the integration).
 */
export interface AgentTool {
  /** Unique among the agent's tools, provider-safe: [a-zA-Z0-9_-], at most 64 characters. */
  name: string;
  description: string;
  /** JSON schema of the input. */
  inputSchema: Record<string, unknown>;
  integrationId: string;
  /** The integration's type (`slack`) and the connector's tool (`post_message`). */
  integrationType: string;
  tool: string;
  notification: ToolNotificationKind;
}

/** What a tool call gave: data for the model or the rule and one line for people; or why it failed. */
export type AgentToolResult =
  { ok: true; summary: string; data: unknown } | { ok: false; summary: string; retryable: boolean };
