import { describe, expect, it } from 'vitest';
import {
  answerEvidence,
  answerFromKnowledge,
  asksForHuman,
  contentTerms,
  languageOf,
  type KbPassage,
} from './chat.kb-responder.js';

const passage = (id: string, text: string, title = `Doc ${id}`): KbPassage => ({
  chunk_id: `c${id}`,
  document_id: `d${id}`,
  title,
  collection_id: null,
  text,
  score: 1,
});

const refunds = passage(
  '1',
  'Q: How long do refunds take?\nA: Refunds are issued to the original card within 5 business days. Store credit is instant.',
  'Refund policy',
);
const shipping = passage(
  '2',
  'We ship to all GCC countries. Express shipping takes two days and costs 30 SAR.',
  'Shipping',
);
const arabic = passage(
  '3',
  'س: كيف أعيد تعيين كلمة المرور؟\nج: اضغط على "نسيت كلمة المرور" في صفحة الدخول وسنرسل لك رابطاً عبر البريد الإلكتروني. الرابط صالح لمدة ساعة.',
  'الحساب',
);
/** A help-centre article in prose, with no FAQ question line to lean on. */
const refundArticle = passage(
  '4',
  'Refunds are issued to the original card within 5 business days. Store credit is instant.',
  'Refund policy',
);
const arabicShipping = passage('5', 'نشحن إلى جميع دول الخليج. يصل الشحن السريع خلال يومين، وسعره 30 ريالاً.', 'الشحن');

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

  it.each([
    'How long do refunds take?',
    'How long does a refund take?',
    'When will I get my money back?',
    'How many days until the cash is back on my card?',
  ])('answers "%s" from an article that words it otherwise', (query) => {
    const answer = answerFromKnowledge(query, [refundArticle, shipping]);
    expect(answer.found).toBe(true);
    expect(answer.sentences).toEqual(['Refunds are issued to the original card within 5 business days.']);
    expect(answer.citations.map((c) => c.chunk_id)).toEqual(['c4']);
  });

  it.each([
    'What is the weather in Paris tomorrow?',
    'Where is your nearest store in Cairo?',
    'How long is the flight to Paris?',
    'ما هي عاصمة اليابان؟',
  ])('finds nothing for the unrelated question "%s"', (query) => {
    const answer = answerFromKnowledge(query, [refunds, refundArticle, shipping, arabic]);
    expect(answer).toMatchObject({ found: false, sentences: [], citations: [] });
  });

  it('finds nothing when a question only asks "how long" and names no topic', () => {
    expect(answerFromKnowledge('How long does it take?', [refundArticle, shipping]).found).toBe(false);
  });

  it('answers an Arabic question for a quantity with the sentence that holds it', () => {
    const answer = answerFromKnowledge('كم سعر الشحن السريع؟', [arabic, arabicShipping]);
    expect(answer.found).toBe(true);
    expect(answer.language).toBe('ar');
    expect(answer.sentences).toEqual(['يصل الشحن السريع خلال يومين، وسعره 30 ريالاً.']);
  });

  it('counts the title of a passage as part of its support', () => {
    const untitled = answerFromKnowledge('Which payment methods do you accept?', [
      passage('6', 'We accept Visa and Mastercard.', 'Doc 6'),
      shipping,
    ]);
    const titled = answerFromKnowledge('Which payment methods do you accept?', [
      passage('6', 'We accept Visa and Mastercard.', 'Payment methods'),
      shipping,
    ]);
    expect(untitled.found).toBe(false);
    expect(titled.sentences).toEqual(['We accept Visa and Mastercard.']);
  });

  it('finds nothing without passages or content words', () => {
    expect(answerFromKnowledge('refunds', []).found).toBe(false);
    expect(answerFromKnowledge('what is it?', [refunds]).found).toBe(false);
  });

  it('counts a support-domain equivalent of a question word as that word', () => {
    const password = passage(
      '7',
      'If you forgot your password, select Forgot password on the sign-in page. We e-mail you a reset link.',
      'Resetting your password',
    );
    const answer = answerFromKnowledge("I can't remember my login details", [shipping, password]);
    expect(answer.found).toBe(true);
    expect(answer.citations.map((c) => c.chunk_id)).toEqual(['c7']);
    // Without an equivalent in the passages, the same words find nothing.
    expect(answerFromKnowledge("I can't remember my login details", [shipping, refundArticle]).found).toBe(false);
  });

  it("reads a document's alternative questions as the questions its passage answers", () => {
    const hours = passage('8', 'Our shop in Jeddah opens from 9 am to 10 pm every day.', 'Opening hours');
    expect(answerFromKnowledge('Can I visit the store on a Friday evening?', [shipping, hours]).found).toBe(false);
    const answer = answerFromKnowledge('Can I visit the store on a Friday evening?', [
      shipping,
      { ...hours, questions: ['Can I visit the store on Friday?'] },
    ]);
    expect(answer.found).toBe(true);
    expect(answer.sentences).toEqual(['Our shop in Jeddah opens from 9 am to 10 pm every day.']);
  });

  it('meets an Arabic word written with a one-letter proclitic ("لكاميرا", "بكاميرا")', () => {
    const support = passage('9', 'الدعم متاح لكاميرا الحديقة.', 'الدعم');
    const answer = answerFromKnowledge('كاميرا الحديقة', [arabicShipping, support]);
    expect(answer.sentences).toEqual(['الدعم متاح لكاميرا الحديقة.']);
  });

  it('reads "when will it arrive" as asking for a time: the refund, not the delivery that arrives', () => {
    const delivery = passage(
      '10',
      'Orders ship within 2 business days. Express delivery arrives the next business day.',
      'Shipping',
    );
    const refund = answerFromKnowledge('When will my refund arrive?', [delivery, refundArticle]);
    expect(refund.sentences).toEqual(['Refunds are issued to the original card within 5 business days.']);
    const order = answerFromKnowledge('When will my order arrive?', [refundArticle, delivery]);
    expect(order.sentences[0]).toBe('Orders ship within 2 business days.');
  });

  it('does not repeat a sentence found in overlapping chunks', () => {
    const answer = answerFromKnowledge('express shipping cost', [shipping, { ...shipping, chunk_id: 'c9' }]);
    expect(answer.sentences).toEqual(['Express shipping takes two days and costs 30 SAR.']);
  });
});

describe('answer types and the sliding window in the found decision', () => {
  /** Other articles on the same topic, whose sentences repeat the question's words. */
  const repairs = [
    passage(
      '11',
      'Camera repairs are free during the warranty. A repaired camera is tested before it is returned.',
      'Repairs',
    ),
    passage('12', 'A camera lens can be cleaned with a soft cloth. Never use water on the lens.', 'Care'),
    passage('13', 'You can track a repair from the Orders page. We email you when the repair is finished.', 'Tracking'),
  ];

  it.each([
    [
      'Where is a broken camera lens repaired?',
      'A broken lens is repaired in Riyadh.',
      'A broken lens is repaired free of charge.',
    ],
    [
      'Who repairs a broken camera lens?',
      'A broken lens is repaired by our service partner.',
      'A broken lens is repaired free of charge.',
    ],
  ])(
    'answers "%s" from a sentence that holds the kind of answer asked for, not from one that lacks it',
    (query, typed, untyped) => {
      const answer = answerFromKnowledge(query, [...repairs, passage('1', typed, 'Lens repairs')]);
      expect(answer.found).toBe(true);
      expect(answer.sentences).toEqual([typed]);
      expect(answerFromKnowledge(query, [...repairs, passage('1', untyped, 'Lens repairs')]).found).toBe(false);
    },
  );

  it('does not answer "how many" with a sentence that only repeats the question\'s words', () => {
    const answer = answerFromKnowledge('How many repairs are free?', [
      repairs[0]!,
      passage('1', 'Two repairs a year are free.'),
    ]);
    expect(answer.sentences).toEqual(['Two repairs a year are free.']);
    expect(answerFromKnowledge('How many repairs are free?', [repairs[0]!, shipping]).found).toBe(false);
  });

  it('marks a best sentence that lacks the expected answer type, counting no word of the question as one', () => {
    const evidence = (query: string, text: string) => answerEvidence(query, [passage('1', text, 'Stores')])?.evidence;
    expect(evidence('Where is the Cairo store?', 'Our Cairo store opens every day.')?.untyped).toBe(1);
    expect(evidence('Where is the Cairo store?', 'Our Cairo store is in Zamalek.')?.untyped).toBe(0);
    expect(evidence('متى يفتح المتجر؟', 'يفتح المتجر أبوابه للجميع.')?.untyped).toBe(1);
    expect(evidence('متى يفتح المتجر؟', 'يفتح المتجر الساعة 9 صباحاً.')?.untyped).toBe(0);
    // A question that names no kind of answer, and a yes/no question, expect none.
    expect(evidence('Cairo store opening', 'Our Cairo store opens every day.')?.untyped).toBe(0);
    expect(evidence('Does the Cairo store open every day?', 'Our Cairo store opens every day.')?.untyped).toBe(0);
  });

  it('sees question words an answer spreads over two neighbouring sentences, not over distant ones', () => {
    const query = 'Which courier delivers parcels to Dammam?';
    const near = 'Parcels are packed in our warehouse. Dammam orders go with Aramex.';
    const far =
      'Parcels are packed in our warehouse and checked twice before they leave, labelled, weighed, photographed and ' +
      'sealed by the packing team every morning. Dammam orders go with Aramex.';
    const window = (text: string) => answerEvidence(query, [passage('1', text, 'Delivery')])?.evidence.window ?? 0;
    expect(window(near)).toBe(1);
    expect(window(far)).toBeLessThan(1);
  });
});

describe('text helpers', () => {
  it('normalises and stems English and Arabic', () => {
    expect(contentTerms('The refunds were issued')).toEqual(['refund', 'issu']);
    expect(contentTerms('invoices include VAT')).toEqual(contentTerms('invoice includes vat'));
    expect(contentTerms('shipped shipping boxes')).toEqual(contentTerms('ship ship box'));
    expect(contentTerms('care')).not.toEqual(contentTerms('car'));
    // English stems as PostgreSQL's Snowball "english" configuration makes them (Porter2).
    expect(contentTerms('accountant billing subscriptions cancelled')).toEqual([
      'account',
      'bill',
      'subscript',
      'cancel',
    ]);
    expect(contentTerms("I don't know the customer's order")).toEqual(contentTerms('customer order'));
    expect(contentTerms('والمرور')).toEqual(contentTerms('المرور'));
    expect(contentTerms('إعادة')).toEqual(contentTerms('اعاده'));
    expect(contentTerms('كَلِمَةُ الْمُرُورِ')).toEqual(contentTerms('كلمة المرور'));
    // A teh marbuta before a pronoun, and letters typed one for another.
    expect(contentTerms('كتلته')).toEqual(contentTerms('كتلة'));
    expect(contentTerms('بمازا تعمل')).toEqual(contentTerms('بماذا تعمل'));
    expect(contentTerms('على')).toEqual(contentTerms('علي'));
  });
  it('detects the language and requests for a human', () => {
    expect(languageOf('مرحبا how')).toBe('ar');
    expect(languageOf('hello')).toBe('en');
    expect(asksForHuman('Can I talk to a human please')).toBe(true);
    expect(asksForHuman('أريد التحدث مع موظف')).toBe(true);
    expect(asksForHuman('how do refunds work')).toBe(false);
  });
});
