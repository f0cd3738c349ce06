/**
 * The agent runtime: retrieval from the agent's collections, then either a configured language
 * model (streamed, with the passages as context) or the built-in knowledge-base responder. Text
 * reaches `onText` as it is produced; the outcome says whether the agent resolved or escalated.
 */
import { AppError } from '../../http/errors.js';
import { LlmError, type LanguageModels, type LlmMessage } from '../../ports/llm.js';
import { BUILTIN_KB_MODEL, toEscalation, type AgentRow } from '../agents/index.js';
import { answerFromKnowledge, asksForHuman, languageOf, phrases, type KbPassage } from './chat.kb-responder.js';
import type { KnowledgeSearch } from './chat.ports.js';
import type { Citation } from './chat.tables.js';

export interface TurnInput {
  companyId: string;
  agent: AgentRow;
  query: string;
  /** Earlier turns, oldest first. */
  history: LlmMessage[];
}

export interface TurnOutcome {
  text: string;
  citations: Citation[];
  resolved: boolean;
  escalated: boolean;
  /** Knowledge passages retrieved for the turn. */
  retrieved: number;
  model: string;
}

/** What the model writes when it cannot answer from what it was given; never shown to the user. */
export const ESCALATE_MARKER = '[ESCALATE]';

/** Removes the marker from a stream of deltas, holding back a tail that could be its start. */
export class MarkerFilter {
  private pending = '';
  found = false;

  push(delta: string): string {
    let text = this.pending + delta;
    if (text.includes(ESCALATE_MARKER)) {
      this.found = true;
      text = text.split(ESCALATE_MARKER).join('');
    }
    let hold = 0;
    for (let k = Math.min(ESCALATE_MARKER.length - 1, text.length); k > 0; k--) {
      if (ESCALATE_MARKER.startsWith(text.slice(-k))) {
        hold = k;
        break;
      }
    }
    this.pending = text.slice(text.length - hold);
    return text.slice(0, text.length - hold);
  }

  flush(): string {
    const rest = this.pending;
    this.pending = '';
    return rest;
  }
}

function toCitation(hit: KbPassage): Citation {
  return {
    chunk_id: hit.chunk_id,
    document_id: hit.document_id,
    title: hit.title,
    collection_id: hit.collection_id,
    score: hit.score,
    text: hit.text.length > 500 ? `${hit.text.slice(0, 499)}…` : hit.text,
  };
}

export function systemPrompt(agent: AgentRow, passages: KbPassage[]): string {
  // An untitled agent (the roll-out warns) is just an assistant.
  const lines = [
    agent.title.trim()
      ? `You are ${agent.title}, an assistant of this company.`
      : 'You are an assistant of this company.',
  ];
  if (agent.task_description) lines.push(`Your task: ${agent.task_description}`);
  if (agent.instructions) lines.push(agent.instructions);
  lines.push(
    "Answer in the language of the user's last message.",
    'Use the knowledge passages below when they are relevant and cite them as [n].',
    `If the passages and the conversation do not let you answer, say so briefly, do not invent facts, and end your reply with ${ESCALATE_MARKER}.`,
  );
  if (passages.length) {
    lines.push('', 'Knowledge passages:');
    passages.forEach((passage, index) => lines.push(`[${index + 1}] (${passage.title}) ${passage.text}`));
  } else {
    lines.push('', 'No knowledge passages were found for this question.');
  }
  return lines.join('\n');
}

export interface RuntimeDeps {
  llm: LanguageModels;
  knowledge: KnowledgeSearch | null;
  retrievalTopK: number;
}

export function createChatRuntime(deps: RuntimeDeps) {
  /** The top chunks for `query` in the agent's collections (none: all of the company's knowledge). */
  async function retrieve(
    companyId: string,
    query: string,
    collectionIds: readonly string[],
    signal: AbortSignal,
  ): Promise<KbPassage[]> {
    if (!deps.knowledge) return [];
    const scope = collectionIds.length ? { collectionIds: [...collectionIds] } : {};
    const { results } = await deps.knowledge.search(companyId, { query, topK: deps.retrievalTopK, signal, ...scope });
    return results;
  }

  async function builtin(
    input: TurnInput,
    passages: KbPassage[],
    onText: (delta: string) => void,
  ): Promise<TurnOutcome> {
    const escalation = toEscalation(input.agent.escalation);
    const base = { retrieved: passages.length, model: BUILTIN_KB_MODEL };
    const say = phrases(languageOf(input.query));
    if (escalation.enabled && asksForHuman(input.query)) {
      const text = escalation.message || say.escalated;
      onText(text);
      return { ...base, text, citations: [], resolved: false, escalated: true };
    }
    const answer = answerFromKnowledge(input.query, passages);
    const parts = answer.found
      ? [
          ...answer.sentences,
          `\n\n${say.sources}: ${[...new Set(answer.citations.map((citation) => citation.title))].join('; ')}`,
        ]
      : [say.notFound, ...(escalation.enabled ? [escalation.message || say.offer] : [])];
    let text = '';
    parts.forEach((part, index) => {
      const delta = index > 0 && !part.startsWith('\n') ? ` ${part}` : part;
      text += delta;
      onText(delta);
    });
    return { ...base, text, citations: answer.citations, resolved: answer.found, escalated: false };
  }

  async function model(
    input: TurnInput,
    passages: KbPassage[],
    signal: AbortSignal,
    onText: (delta: string) => void,
  ): Promise<TurnOutcome> {
    const messages: LlmMessage[] = [
      { role: 'system', content: systemPrompt(input.agent, passages) },
      ...input.history,
      { role: 'user', content: input.query },
    ];
    const filter = new MarkerFilter();
    let text = '';
    const emit = (delta: string) => {
      if (!delta) return;
      text += delta;
      onText(delta);
    };
    try {
      for await (const delta of deps.llm.stream({
        model: input.agent.model,
        messages,
        temperature: input.agent.temperature,
        signal,
      })) {
        emit(filter.push(delta));
      }
    } catch (error) {
      if (error instanceof LlmError) throw new AppError(502, error.message, 'BadGateway');
      throw error;
    }
    emit(filter.flush());
    const cited = passages.filter((_passage, index) => text.includes(`[${index + 1}]`));
    const escalated = filter.found && toEscalation(input.agent.escalation).enabled;
    return {
      text: text.trim(),
      citations: (cited.length ? cited : filter.found ? [] : passages).map(toCitation),
      resolved: !filter.found && text.trim().length > 0,
      escalated,
      retrieved: passages.length,
      model: input.agent.model,
    };
  }

  return {
    /** The knowledge passages for a question (started early by the caller to overlap other work). */
    retrieve,

    /**
     * Answers one user message; throws AppError 502 when the provider fails. `retrieval` is a
     * search already under way for this input; without it, the search runs first.
     */
    async respond(
      input: TurnInput,
      signal: AbortSignal,
      onText: (delta: string) => void = () => undefined,
      retrieval?: Promise<KbPassage[]>,
    ): Promise<TurnOutcome> {
      const passages = await (retrieval ?? retrieve(input.companyId, input.query, input.agent.collection_ids, signal));
      // An agent whose provider is no longer configured falls back to the built-in responder.
      const useModel = input.agent.model !== BUILTIN_KB_MODEL && deps.llm.checkModel(input.agent.model) === null;
      return useModel ? model(input, passages, signal, onText) : builtin(input, passages, onText);
    },
  };
}

export type ChatRuntime = ReturnType<typeof createChatRuntime>;
