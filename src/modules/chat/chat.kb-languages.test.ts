import { describe, expect, it } from 'vitest';
import { answerFromKnowledge, languageOf, phrases, type KbPassage } from './chat.kb-responder.js';

const passage = (id: string, title: string, text: string, language: string): KbPassage => ({
  chunk_id: id,
  document_id: id,
  title,
  collection_id: null,
  text,
  score: 1,
  language,
});

const refundsEn = passage(
  'en',
  'Refunds',
  'Refunds are paid back to your card within 5 business days after we receive the parcel.',
  'en',
);
const refundsFr = passage(
  'fr',
  'Remboursements',
  'Les remboursements sont versés sur votre carte sous 5 jours ouvrés après réception du colis.',
  'fr',
);
const refundsDe = passage(
  'de',
  'Erstattungen',
  'Erstattungen werden innerhalb von 5 Werktagen nach Eingang des Pakets auf Ihre Karte überwiesen.',
  'de',
);
const refundsEs = passage(
  'es',
  'Reembolsos',
  'Los reembolsos se abonan en su tarjeta en un plazo de 5 días hábiles tras recibir el paquete.',
  'es',
);
const refundsPt = passage(
  'pt',
  'Reembolsos',
  'Os reembolsos são pagos no seu cartão no prazo de 5 dias úteis após recebermos a encomenda.',
  'pt',
);
const refundsIt = passage(
  'it',
  'Rimborsi',
  'I rimborsi vengono accreditati sulla sua carta entro 5 giorni lavorativi dal ricevimento del pacco.',
  'it',
);
const all = [refundsEn, refundsFr, refundsDe, refundsEs, refundsPt, refundsIt];

describe('builtin:kb in the customer’s language', () => {
  it.each([
    ['en', 'How long do refunds take?'],
    ['fr', 'Combien de temps prennent les remboursements ?'],
    ['de', 'Wie lange dauern Erstattungen?'],
    ['es', '¿Cuánto tardan los reembolsos?'],
    ['pt', 'Quanto tempo demoram os reembolsos?'],
    ['it', 'Quanto tempo richiedono i rimborsi?'],
    ['ar', 'كم يستغرق استرداد المبلغ؟'],
  ])('tells a %s question by its words', (language, question) => {
    expect(languageOf(question)).toBe(language);
  });

  it.each([
    ['fr', 'Combien de temps prennent les remboursements ?', 'jours ouvrés'],
    ['de', 'Wie lange dauern Erstattungen?', 'Werktagen'],
    ['es', '¿Cuánto tardan los reembolsos?', 'días hábiles'],
    ['pt', 'Quanto tempo demoram os reembolsos?', 'dias úteis'],
    ['it', 'Quanto tempo richiedono i rimborsi?', 'giorni lavorativi'],
  ])('answers a %s question from the article in its language, not the English one', (language, question, fact) => {
    const answer = answerFromKnowledge(question, all);
    expect(answer.found).toBe(true);
    expect(answer.language).toBe(language);
    expect(answer.sentences.join(' ')).toContain(fact);
    expect(answer.citations.map((citation) => citation.document_id)).toEqual([language]);
  });

  it('says "not found" and offers a person in the question’s language', () => {
    const answer = answerFromKnowledge('Louez-vous des vélos cargo pour un déménagement ?', [refundsFr]);
    expect(answer).toMatchObject({ found: false, language: 'fr' });
    expect(phrases(answer.language).notFound).toBe(
      "Je n'ai pas trouvé de réponse à cette question dans notre base de connaissances.",
    );
    expect(phrases('de').offer).toMatch(/^Möchten Sie/);
    expect(phrases('es').sources).toBe('Fuentes');
  });
});
