/**
 * Rule-based classification of a new support query from its subject and description, used
 * when the platform has no LLM verdict: the first matching rule wins, in the order below.
 */
import type { Priority, QueryType } from './support-queries.tables.js';

const TYPE_RULES: [QueryType, RegExp][] = [
  ['billing', /\b(invoice|billing|bill|charged?|refund|payment|pay|subscription|price|pricing|credit card|receipt)\b/i],
  ['account', /\b(password|log ?in|sign ?in|account|username|2fa|two[- ]factor|profile|e-?mail address|locked out)\b/i],
  [
    'bug_report',
    /\b(bug|crash(es|ed)?|broken|error|exception|fails?|failing|doesn'?t work|not working|stopped working)\b/i,
  ],
  [
    'feature_request',
    /\b(feature|would be (nice|great)|could you add|please add|suggest(ion)?|enhancement|wish|roadmap)\b/i,
  ],
  [
    'technical_support',
    /\b(how (do|can|to)|configure|configuration|install|setup|set up|integrat(e|ion)|api|webhook|sdk|connect)\b/i,
  ],
];

const PRIORITY_RULES: [Priority, RegExp][] = [
  ['urgent', /\b(urgent|asap|immediately|outage|down for everyone|critical|emergency|security breach|data loss)\b/i],
  ['high', /\b(can'?t|cannot|unable|blocked|broken|crash(es|ed)?|error|fails?|failing|not working|charged twice)\b/i],
  ['low', /\b(question|wondering|curious|suggest(ion)?|feature|would be nice|when you have time)\b/i],
];

export function classifyQueryType(text: string): QueryType {
  return TYPE_RULES.find(([, pattern]) => pattern.test(text))?.[0] ?? 'general_inquiry';
}

export function classifyPriority(text: string): Priority {
  return PRIORITY_RULES.find(([, pattern]) => pattern.test(text))?.[0] ?? 'medium';
}
