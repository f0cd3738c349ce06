import { describe, expect, it } from 'vitest';
import { answerFromKnowledge, asksForHuman, contentTerms, languageOf, type KbPassage } from './chat.kb-responder.js';

const passage = (id: string, text: string, title = `Doc ${id}`): KbPassage => ({ chunk_id: `c${id}`, document_id: `d${id}`, title, collection_id: null, text, score: 1 });

const refunds = passage('1', 'Q: How long do refunds take?\nA: Refunds are issued to the original card within 5 business days. Store credit is instant.', 'Refund policy');
const shipping = passage('2', 'We ship to all GCC countries. Express shipping takes two days and costs 30 SAR.', 'Shipping');
const arabic = passage('3', 'س: كيف أعيد تعيين كلمة المرور؟\nج: اضغط على "نسيت كلمة المرور" في صفحة الدخول وسنرسل لك رابطاً عبر البريد الإلكتروني. الرابط صالح لمدة ساعة.', 'الحساب');

describe('answerFromKnowledge', () => {
  it('answers an FAQ question with the answer line, not the question', () => {
    const answer = answerFromKnowledge('how long does a refund take?', [shipping, refunds]);
    expect(answer.found).toBe(true);
    expect(answer.sentences[0]).toBe('Refunds are issued to the original card within 5 business days.');
    expect(answer.citations.map((c) => c.chunk_id)).toEqual(['c1']);
  });

  it('answers in Arabic from an Arabic passage', () => {
    const answer = answerFromKnowledge('كيف يمكنني إعادة تعيين كلمة المرور؟', [refunds, arabic]);
    expect(answer.found).toBe(true);
    expect(answer.language).toBe('ar');
    expect(answer.sentences.join(' ')).toContain('نسيت كلمة المرور');
    expect(answer.citations[0]?.document_id).toBe('d3');
  });

  it('finds nothing for an unrelated question', () => {
    const answer = answerFromKnowledge('What is the weather in Paris tomorrow?', [refunds, shipping, arabic]);
    expect(answer).toMatchObject({ found: false, sentences: [], citations: [] });
  });

  it('finds nothing without passages or content words', () => {
    expect(answerFromKnowledge('refunds', []).found).toBe(false);
    expect(answerFromKnowledge('what is it?', [refunds]).found).toBe(false);
  });

  it('does not repeat a sentence found in overlapping chunks', () => {
    const answer = answerFromKnowledge('express shipping cost', [shipping, { ...shipping, chunk_id: 'c9' }]);
    expect(answer.sentences).toEqual(['Express shipping takes two days and costs 30 SAR.']);
  });
});

describe('text helpers', () => {
  it('normalises and stems English and Arabic', () => {
    expect(contentTerms('The refunds were issued')).toEqual(['refund', 'issu']);
    expect(contentTerms('والمرور')).toEqual(contentTerms('المرور'));
    expect(contentTerms('إعادة')).toEqual(contentTerms('اعاده'));
  });
  it('detects the language and requests for a human', () => {
    expect(languageOf('مرحبا how')).toBe('ar');
    expect(languageOf('hello')).toBe('en');
    expect(asksForHuman('Can I talk to a human please')).toBe(true);
    expect(asksForHuman('أريد التحدث مع موظف')).toBe(true);
    expect(asksForHuman('how do refunds work')).toBe(false);
  });
});
