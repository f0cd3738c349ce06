import { describe, expect, it } from 'vitest';
import { languageOf, questionLanguage } from './chat.kb-language.js';

const passage = (language: string) => ({ text: '…', language });

describe('the language of a short question', () => {
  it.each([
    ['pt', 'Vocês entregam no sábado?'],
    ['pt', 'Não consigo entrar na minha conta'],
    ['pt', 'Esqueci a senha'],
    ['pt', 'Como faço a devolução?'],
    ['pt', 'Dá para trocar o tamanho?'],
    ['es', '¿Hacen envíos a Canarias?'],
    ['es', 'No puedo entrar en mi cuenta'],
    ['es', 'Olvidé la contraseña'],
    ['es', 'Necesito cambiar la dirección de envío'],
    ['es', 'Mi pedido llegó roto'],
    ['it', 'Posso pagare con la carta?'],
    ['it', 'Non riesco ad accedere al mio account'],
    ['it', 'Quanto costa la spedizione?'],
    ['it', 'Gli orari del negozio?'],
    ['fr', 'Où est ma commande ?'],
    ['fr', "Je n'arrive pas à me connecter"],
    ['fr', 'Livrez-vous en Belgique ?'],
    ['fr', 'Quel est le délai de livraison ?'],
    ['de', 'Wo ist meine Bestellung?'],
    ['de', 'Ich kann mich nicht anmelden'],
    ['de', 'Liefert ihr auch nach Österreich?'],
    ['en', 'Where is my order?'],
    ['en', "I can't log in"],
    ['en', 'Do you ship to Canada?'],
    ['en', 'I am unhappy with the refund'],
    ['en', 'How do I enhance my plan?'],
  ])('%s: %s', (language, question) => {
    expect(languageOf(question)).toBe(language);
  });
});

describe('hints settle what the question alone leaves open', () => {
  // "o" is Spanish ("or") and Portuguese ("the"); the other words are neither's function words.
  const tied = 'O seguro cobre roubo?';

  it('a tie between Spanish and Portuguese goes to the language of the best passage among them', () => {
    expect(questionLanguage(tied, [passage('pt'), passage('es')])).toBe('pt');
    expect(questionLanguage(tied, [passage('en'), passage('es'), passage('pt')])).toBe('es');
  });

  it('the customer’s earlier messages come before the passages', () => {
    expect(questionLanguage(tied, [passage('es')], ['Olá, aluguei uma bicicleta ontem e não funciona'])).toBe('pt');
    expect(questionLanguage(tied, [passage('pt')], ['Hola, alquilé una bicicleta ayer'])).toBe('es');
  });

  it('a question with nothing telling takes the conversation’s language, else English — never the passages’', () => {
    expect(questionLanguage('Capacete?', [passage('pt')])).toBe('en');
    expect(questionLanguage('Capacete?', [], ['Não encontro a minha reserva'])).toBe('pt');
  });

  it('hints never overrule a question that says its language', () => {
    expect(questionLanguage('¿Cuánto cuesta el casco?', [passage('pt')], ['Olá, tudo bem?'])).toBe('es');
    expect(questionLanguage('Quanto custa o capacete? Não sei', [passage('es')], ['Hola'])).toBe('pt');
  });
});
