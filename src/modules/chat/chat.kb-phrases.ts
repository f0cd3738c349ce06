/** The built-in responder's own sentences in each language it answers in (chat.kb-responder.ts). */
import type { TermLanguage as Language } from '../knowledge/index.js';

const PHRASES: Record<Language, { notFound: string; offer: string; escalated: string; sources: string }> = {
  en: {
    notFound: "I couldn't find an answer to that in our knowledge base.",
    offer: 'Would you like me to connect you with a member of our team?',
    escalated: "I'm handing this conversation to a member of our team; they will get back to you.",
    sources: 'Sources',
  },
  ar: {
    notFound: 'لم أجد إجابة عن سؤالك في قاعدة المعرفة لدينا.',
    offer: 'هل تريد أن أحولك إلى أحد أعضاء فريقنا؟',
    escalated: 'سأحوّل هذه المحادثة إلى أحد أعضاء فريقنا، وسيتواصلون معك قريباً.',
    sources: 'المصادر',
  },
  fr: {
    notFound: "Je n'ai pas trouvé de réponse à cette question dans notre base de connaissances.",
    offer: 'Souhaitez-vous que je vous mette en relation avec un membre de notre équipe ?',
    escalated: 'Je transmets cette conversation à un membre de notre équipe ; il reviendra vers vous.',
    sources: 'Sources',
  },
  de: {
    notFound: 'Dazu habe ich in unserer Wissensdatenbank keine Antwort gefunden.',
    offer: 'Möchten Sie, dass ich Sie mit jemandem aus unserem Team verbinde?',
    escalated: 'Ich übergebe dieses Gespräch an jemanden aus unserem Team; wir melden uns bei Ihnen.',
    sources: 'Quellen',
  },
  es: {
    notFound: 'No he encontrado una respuesta a eso en nuestra base de conocimientos.',
    offer: '¿Quiere que le ponga en contacto con un miembro de nuestro equipo?',
    escalated: 'Paso esta conversación a un miembro de nuestro equipo; se pondrá en contacto con usted.',
    sources: 'Fuentes',
  },
  pt: {
    notFound: 'Não encontrei uma resposta para isso na nossa base de conhecimento.',
    offer: 'Quer que eu o coloque em contacto com um membro da nossa equipa?',
    escalated: 'Vou passar esta conversa a um membro da nossa equipa; entrarão em contacto consigo.',
    sources: 'Fontes',
  },
  it: {
    notFound: 'Non ho trovato una risposta a questa domanda nella nostra base di conoscenza.',
    offer: 'Vuole che la metta in contatto con un membro del nostro team?',
    escalated: 'Passo questa conversazione a un membro del nostro team, che la ricontatterà.',
    sources: 'Fonti',
  },
};

export function phrases(language: Language) {
  return PHRASES[language];
}
