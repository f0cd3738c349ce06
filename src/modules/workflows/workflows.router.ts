/**
 * Picks the step of a workflow that answers a turn. `rules`: the support-queries classifier's
 * query type, the question's language (by script) and the steps' keywords, in memory (no I/O);
 * a model router asks the named model for one step name in one short call bounded in time, and
 * falls back to the rules when it fails, times out or names no step. Both are sticky: the agent
 * answering the conversation keeps it unless another step clearly applies.
 */
import { startTimeLimit } from '../../lib/abort-limit.js';
import type { LanguageModels } from '../../ports/llm.js';
import { classifyQueryType } from '../support-queries/index.js';
import type { WorkflowStep } from './workflows.tables.js';

export const RULES_ROUTER = 'rules';

/** What routing reads of a workflow (kept in chat's serving cache between changes). */
export interface RoutableWorkflow {
  id: string;
  company_id: string;
  name: string;
  description: string;
  default_agent_id: string;
  router: string;
  steps: WorkflowStep[];
}

export interface RouteInput {
  query: string;
  /** The agent answering the conversation so far (null: a new conversation). */
  currentAgentId: string | null;
  signal?: AbortSignal;
}

export interface RouteDecision {
  agentId: string;
  /** The step chosen (null: the default agent, no step applied). */
  step: string | null;
  /** Why, in a few words (the hand-off event and notification say it). */
  reason: string;
  /** Which router decided: `rules`, the model, or `rules` after the model failed. */
  by: 'rules' | 'model' | 'fallback';
}

/** Scripts that name a language; Latin-script questions match any language not listed here. */
const SCRIPTS: [string, RegExp][] = [
  ['ar', /[\u0600-\u06ff\u0750-\u077f]/g],
  ['he', /[\u0590-\u05ff]/g],
  ['ru', /[\u0400-\u04ff]/g],
  ['el', /[\u0370-\u03ff]/g],
  ['hi', /[\u0900-\u097f]/g],
  ['ja', /[\u3040-\u30ff]/g],
  ['ko', /[\uac00-\ud7af]/g],
  ['zh', /[\u4e00-\u9fff]/g],
];
const NON_LATIN = new Set(SCRIPTS.map(([code]) => code));

/** The question's language as far as its script tells: a code above, or `latin`. */
export function scriptLanguage(text: string): string {
  const latin = (text.match(/[A-Za-z\u00c0-\u024f]/g) ?? []).length;
  let best = 'latin';
  let most = latin;
  for (const [code, pattern] of SCRIPTS) {
    const count = (text.match(pattern) ?? []).length;
    if (count > most) {
      best = code;
      most = count;
    }
  }
  return best;
}

function speaks(step: WorkflowStep, language: string): boolean {
  const listed = step.when.languages;
  if (!listed.length) return true;
  return listed.some((code) => {
    const primary = code.split('-', 1)[0]!.toLowerCase();
    return language === 'latin' ? !NON_LATIN.has(primary) : primary === language;
  });
}

const WORD = /[\p{L}\p{N}]/u;
const LATIN_WORD = /[A-Za-z0-9\u00c0-\u024f]/;

/**
 * `keyword` in `text` (both lower-case). A Latin keyword must not be part of a longer Latin word
 * ("pay" is not in "display"); other scripts match inside words (Arabic attaches prefixes: ال، ب، و).
 */
function contains(text: string, keyword: string): boolean {
  let from = 0;
  for (;;) {
    const at = text.indexOf(keyword, from);
    if (at < 0) return false;
    const before = text[at - 1] ?? '';
    const after = text[at + keyword.length] ?? '';
    const startsLatin = LATIN_WORD.test(keyword[0] ?? '');
    const endsLatin = LATIN_WORD.test(keyword[keyword.length - 1] ?? '');
    if ((!startsLatin || !LATIN_WORD.test(before)) && (!endsLatin || !LATIN_WORD.test(after))) return true;
    from = at + 1;
  }
}

interface Score {
  step: WorkflowStep;
  score: number;
  reason: string;
}

/** Each step's score for the question: 3 per keyword found, 2 for its query type, 1 for its language alone. */
export function scoreSteps(steps: readonly WorkflowStep[], query: string): Score[] {
  const text = query.toLowerCase();
  const type = classifyQueryType(query);
  const language = scriptLanguage(query);
  return steps.map((step) => {
    if (!speaks(step, language)) return { step, score: 0, reason: '' };
    const found = step.when.keywords.filter((keyword) => WORD.test(keyword) && contains(text, keyword.toLowerCase()));
    const typed = step.when.query_types.includes(type);
    const onlyLanguage = !step.when.keywords.length && !step.when.query_types.length && step.when.languages.length > 0;
    const score = found.length * 3 + (typed ? 2 : 0) + (onlyLanguage && language !== 'latin' ? 1 : 0);
    const reasons = [
      ...(found.length ? [`keyword ${found.map((keyword) => `"${keyword}"`).join(', ')}`] : []),
      ...(typed ? [`query type ${type}`] : []),
      ...(onlyLanguage && score ? [`language ${language}`] : []),
    ];
    return { step, score, reason: reasons.join(', ') };
  });
}

/** The rules router: sticky unless a step scores higher than every step of the current agent. */
export function routeByRules(workflow: RoutableWorkflow, input: RouteInput): RouteDecision {
  const scores = scoreSteps(workflow.steps, input.query);
  let best: Score | null = null;
  for (const entry of scores) if (entry.score > 0 && (!best || entry.score > best.score)) best = entry;
  const current = input.currentAgentId;
  if (current && (current === workflow.default_agent_id || workflow.steps.some((s) => s.agent_id === current))) {
    const held = Math.max(0, ...scores.filter((entry) => entry.step.agent_id === current).map((entry) => entry.score));
    if (!best || best.score <= held || best.step.agent_id === current)
      return {
        agentId: current,
        step: stepOf(workflow, current),
        reason: 'the conversation stays with its agent',
        by: 'rules',
      };
  }
  if (best) return { agentId: best.step.agent_id, step: best.step.name, reason: best.reason, by: 'rules' };
  return { agentId: workflow.default_agent_id, step: null, reason: 'no step applies: the default agent', by: 'rules' };
}

function stepOf(workflow: RoutableWorkflow, agentId: string): string | null {
  return workflow.steps.find((step) => step.agent_id === agentId)?.name ?? null;
}

/** The instructions of a model router: the steps by name and condition, one name back. */
export function routerPrompt(workflow: RoutableWorkflow, currentStep: string | null): string {
  const lines = [
    `You route customer messages for "${workflow.name}" to the one step that should answer.`,
    ...(workflow.description ? [`About: ${workflow.description.slice(0, 1000)}`] : []),
    'Steps:',
    ...workflow.steps.map((step) => {
      const when = [
        step.when.query_types.length ? `query types: ${step.when.query_types.join(', ')}` : '',
        step.when.keywords.length ? `keywords: ${step.when.keywords.join(', ')}` : '',
        step.when.languages.length ? `languages: ${step.when.languages.join(', ')}` : '',
      ].filter(Boolean);
      return `- ${step.name}${when.length ? ` (${when.join('; ')})` : ''}`;
    }),
    currentStep
      ? `The conversation is with "${currentStep}"; keep it unless another step clearly fits the message.`
      : 'This is the first message of the conversation.',
    'Reply with the step name only, exactly as written, or "none" when no step fits.',
  ];
  return lines.join('\n');
}

export interface ModelRouterDeps {
  llm: Pick<LanguageModels, 'checkModel' | 'stream'>;
  /** The most the model may take before the rules decide instead. */
  timeoutMs: number;
  log?: { warn(obj: object, msg: string): void };
}

/** The longest reply read from a model router (a step name is at most 80 characters). */
const MAX_REPLY_CHARS = 200;

export function createRouter(deps: ModelRouterDeps) {
  async function byModel(workflow: RoutableWorkflow, input: RouteInput): Promise<RouteDecision> {
    const problem = deps.llm.checkModel(workflow.router);
    if (problem) throw new Error(problem);
    const currentStep = input.currentAgentId ? stepOf(workflow, input.currentAgentId) : null;
    let reply = '';
    const limit = startTimeLimit(input.signal, deps.timeoutMs);
    try {
      for await (const part of deps.llm.stream({
        model: workflow.router,
        messages: [
          { role: 'system', content: routerPrompt(workflow, currentStep) },
          { role: 'user', content: input.query.slice(0, 4000) },
        ],
        temperature: 0,
        maxTokens: 20,
        signal: limit.signal,
      })) {
        if (typeof part === 'string') reply += part;
        if (reply.length > MAX_REPLY_CHARS) break;
      }
    } catch (error) {
      if (limit.timedOut) throw new Error(`no answer within ${deps.timeoutMs} ms`);
      throw error;
    } finally {
      limit.release();
    }
    if (limit.signal.aborted) throw new Error(`no answer within ${deps.timeoutMs} ms`);
    const said = reply
      .trim()
      .replace(/^["'`*\s]+|["'`*.\s]+$/g, '')
      .toLowerCase();
    if (said === 'none') {
      const agentId = input.currentAgentId ?? workflow.default_agent_id;
      return { agentId, step: stepOf(workflow, agentId), reason: 'the model found no step: no change', by: 'model' };
    }
    const step = workflow.steps.find((candidate) => candidate.name.toLowerCase() === said);
    if (!step) throw new Error(`the model named no step ("${reply.trim().slice(0, 80)}")`);
    const stays = step.agent_id === input.currentAgentId;
    return {
      agentId: step.agent_id,
      step: step.name,
      reason: stays ? 'the conversation stays with its agent' : `the model picked "${step.name}"`,
      by: 'model',
    };
  }

  return {
    async route(workflow: RoutableWorkflow, input: RouteInput): Promise<RouteDecision> {
      if (workflow.router === RULES_ROUTER || !input.query.trim()) return routeByRules(workflow, input);
      try {
        return await byModel(workflow, input);
      } catch (error) {
        if (input.signal?.aborted) throw error;
        const why = error instanceof Error ? error.message : String(error);
        deps.log?.warn({ workflowId: workflow.id, err: why }, 'model router failed; the rules route this turn');
        const decision = routeByRules(workflow, input);
        return { ...decision, by: 'fallback', reason: `${decision.reason} (the model router failed; rules decided)` };
      }
    },
  };
}
