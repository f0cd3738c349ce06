/**
 * A held-out multilingual set for bench/answers/run.ts (`--set multilingual`): the help centre of
 * an e-bike rental company written in English, French, German, Spanish and Portuguese (the same
 * six articles in each language, each uploaded as its own document), with questions in each
 * language written without consulting the support lexicon or the responder's rules. English is
 * the baseline the other languages are compared with; every question must be answered from the
 * article in its own language (an answer citing another language's article is an English — or
 * other — fallback, counted apart). Nothing here is tuned on.
 */
import type { Article, Question } from './help-centre.js';

type Lang = 'en' | 'fr' | 'de' | 'es' | 'pt';
export const MULTILINGUAL_LANGUAGES: Lang[] = ['en', 'fr', 'de', 'es', 'pt'];

interface Topic {
  id: string;
  /** Per language: title, text, a lexical question, a reworded question, and the fact a right answer holds. */
  versions: Record<Lang, { title: string; text: string; lexical: string; reworded: string; facts: string[] }>;
}

const TOPICS: Topic[] = [
  {
    id: 'deposit',
    versions: {
      en: {
        title: 'Rental deposit',
        text: 'Every rental needs a deposit of 150 euros, blocked on your card when you pick up the bike. The deposit is released within 3 working days after you return the bike undamaged.',
        lexical: 'How much is the rental deposit?',
        reworded: 'When do I get the money you held on my card back?',
        facts: ['150 euros', '3 working days'],
      },
      fr: {
        title: 'Caution de location',
        text: 'Chaque location demande une caution de 150 euros, bloquée sur votre carte au retrait du vélo. La caution est débloquée sous 3 jours ouvrés après le retour du vélo en bon état.',
        lexical: 'Quel est le montant de la caution de location ?',
        reworded: "Quand l'argent bloqué sur ma carte sera-t-il débloqué ?",
        facts: ['150 euros', '3 jours ouvrés'],
      },
      de: {
        title: 'Kaution für die Miete',
        text: 'Für jede Miete ist eine Kaution von 150 Euro nötig, die bei der Abholung des Rads auf Ihrer Karte blockiert wird. Die Kaution wird innerhalb von 3 Werktagen freigegeben, nachdem Sie das Rad unbeschädigt zurückgegeben haben.',
        lexical: 'Wie hoch ist die Kaution für die Miete?',
        reworded: 'Wann wird das blockierte Geld auf meiner Karte wieder freigegeben?',
        facts: ['150 euro', '3 werktagen'],
      },
      es: {
        title: 'Fianza del alquiler',
        text: 'Cada alquiler requiere una fianza de 150 euros, que se bloquea en su tarjeta al recoger la bicicleta. La fianza se libera en un plazo de 3 días hábiles después de devolver la bicicleta sin daños.',
        lexical: '¿Cuánto es la fianza del alquiler?',
        reworded: '¿Cuándo se libera el dinero bloqueado en mi tarjeta?',
        facts: ['150 euros', '3 días hábiles'],
      },
      pt: {
        title: 'Caução do aluguer',
        text: 'Cada aluguer exige uma caução de 150 euros, bloqueada no seu cartão quando levanta a bicicleta. A caução é libertada no prazo de 3 dias úteis depois de devolver a bicicleta sem danos.',
        lexical: 'Qual é o valor da caução do aluguer?',
        reworded: 'Quando é libertado o dinheiro bloqueado no meu cartão?',
        facts: ['150 euros', '3 dias úteis'],
      },
    },
  },
  {
    id: 'battery',
    versions: {
      en: {
        title: 'Battery range',
        text: 'A fully charged battery lasts about 80 kilometres in eco mode and 45 kilometres in turbo mode. Charging from empty takes 4 hours with the charger in the saddle bag.',
        lexical: 'How many kilometres does the battery last?',
        reworded: 'How far can I ride before the bike runs out of power?',
        facts: ['80 kilometres', '45 kilometres'],
      },
      fr: {
        title: 'Autonomie de la batterie',
        text: 'Une batterie complètement chargée dure environ 80 kilomètres en mode éco et 45 kilomètres en mode turbo. La recharge complète prend 4 heures avec le chargeur rangé dans la sacoche.',
        lexical: 'Combien de kilomètres dure la batterie ?',
        reworded: "Jusqu'où puis-je rouler avant que le vélo n'ait plus d'électricité ?",
        facts: ['80 kilomètres', '45 kilomètres'],
      },
      de: {
        title: 'Reichweite des Akkus',
        text: 'Ein voll geladener Akku reicht im Eco-Modus für etwa 80 Kilometer und im Turbo-Modus für 45 Kilometer. Das vollständige Laden dauert 4 Stunden mit dem Ladegerät in der Satteltasche.',
        lexical: 'Wie viele Kilometer reicht der Akku?',
        reworded: 'Wie weit komme ich, bevor das Rad keinen Strom mehr hat?',
        facts: ['80 kilometer', '45 kilometer'],
      },
      es: {
        title: 'Autonomía de la batería',
        text: 'Una batería totalmente cargada dura unos 80 kilómetros en modo eco y 45 kilómetros en modo turbo. La carga completa tarda 4 horas con el cargador que va en la alforja.',
        lexical: '¿Cuántos kilómetros dura la batería?',
        reworded: '¿Hasta dónde puedo llegar antes de que la bici se quede sin energía?',
        facts: ['80 kilómetros', '45 kilómetros'],
      },
      pt: {
        title: 'Autonomia da bateria',
        text: 'Uma bateria totalmente carregada dura cerca de 80 quilómetros no modo eco e 45 quilómetros no modo turbo. O carregamento completo demora 4 horas com o carregador que vai no alforge.',
        lexical: 'Quantos quilómetros dura a bateria?',
        reworded: 'Até onde consigo ir antes de a bicicleta ficar sem energia?',
        facts: ['80 quilómetros', '45 quilómetros'],
      },
    },
  },
  {
    id: 'cancel',
    versions: {
      en: {
        title: 'Cancelling a booking',
        text: 'You can cancel a booking free of charge up to 24 hours before the start of the rental. Later cancellations are charged 50 percent of the rental price.',
        lexical: 'Can I cancel a booking free of charge?',
        reworded: 'What happens if I call off my reservation the day before?',
        facts: ['24 hours', '50 percent'],
      },
      fr: {
        title: 'Annuler une réservation',
        text: "Vous pouvez annuler une réservation sans frais jusqu'à 24 heures avant le début de la location. Les annulations plus tardives sont facturées 50 pour cent du prix de la location.",
        lexical: 'Puis-je annuler une réservation sans frais ?',
        reworded: 'Que se passe-t-il si je renonce à ma location la veille ?',
        facts: ['24 heures', '50 pour cent'],
      },
      de: {
        title: 'Buchung stornieren',
        text: 'Sie können eine Buchung bis 24 Stunden vor Beginn der Miete kostenlos stornieren. Spätere Stornierungen werden mit 50 Prozent des Mietpreises berechnet.',
        lexical: 'Kann ich eine Buchung kostenlos stornieren?',
        reworded: 'Was passiert, wenn ich meine Reservierung am Vortag absage?',
        facts: ['24 stunden', '50 prozent'],
      },
      es: {
        title: 'Cancelar una reserva',
        text: 'Puede cancelar una reserva sin coste hasta 24 horas antes del inicio del alquiler. Las cancelaciones posteriores se cobran con el 50 por ciento del precio del alquiler.',
        lexical: '¿Puedo cancelar una reserva sin coste?',
        reworded: '¿Qué pasa si anulo mi alquiler el día anterior?',
        facts: ['24 horas', '50 por ciento'],
      },
      pt: {
        title: 'Cancelar uma reserva',
        text: 'Pode cancelar uma reserva sem custos até 24 horas antes do início do aluguer. Os cancelamentos posteriores são cobrados a 50 por cento do preço do aluguer.',
        lexical: 'Posso cancelar uma reserva sem custos?',
        reworded: 'O que acontece se eu desistir do aluguer na véspera?',
        facts: ['24 horas', '50 por cento'],
      },
    },
  },
  {
    id: 'helmet',
    versions: {
      en: {
        title: 'Helmets and child seats',
        text: 'A helmet is included free with every rental. Child seats cost 5 euros per day and fit children up to 22 kilograms.',
        lexical: 'Is a helmet included with the rental?',
        reworded: 'Do I have to pay extra to bring my toddler along?',
        facts: ['included free', '5 euros per day'],
      },
      fr: {
        title: 'Casques et sièges enfant',
        text: "Un casque est inclus gratuitement avec chaque location. Les sièges enfant coûtent 5 euros par jour et conviennent aux enfants jusqu'à 22 kilos.",
        lexical: 'Un casque est-il inclus avec la location ?',
        reworded: 'Dois-je payer un supplément pour emmener mon petit garçon ?',
        facts: ['inclus gratuitement', '5 euros par jour'],
      },
      de: {
        title: 'Helme und Kindersitze',
        text: 'Ein Helm ist bei jeder Miete kostenlos inbegriffen. Kindersitze kosten 5 Euro pro Tag und passen für Kinder bis 22 Kilogramm.',
        lexical: 'Ist ein Helm in der Miete inbegriffen?',
        reworded: 'Muss ich extra zahlen, wenn mein kleiner Sohn mitfährt?',
        facts: ['kostenlos inbegriffen', '5 euro pro tag'],
      },
      es: {
        title: 'Cascos y sillas infantiles',
        text: 'Cada alquiler incluye un casco gratis. Las sillas infantiles cuestan 5 euros al día y sirven para niños de hasta 22 kilos.',
        lexical: '¿El alquiler incluye casco?',
        reworded: '¿Tengo que pagar más para llevar a mi hijo pequeño?',
        facts: ['casco gratis', '5 euros al día'],
      },
      pt: {
        title: 'Capacetes e cadeiras de criança',
        text: 'Cada aluguer inclui um capacete grátis. As cadeiras de criança custam 5 euros por dia e servem para crianças até 22 quilos.',
        lexical: 'O aluguer inclui capacete?',
        reworded: 'Tenho de pagar a mais para levar o meu filho pequeno?',
        facts: ['capacete grátis', '5 euros por dia'],
      },
    },
  },
  {
    id: 'breakdown',
    versions: {
      en: {
        title: 'Breakdowns and flat tyres',
        text: 'If the bike breaks down or a tyre goes flat, call our roadside line on 0800 555 123. A technician comes to you within 90 minutes in the city centre.',
        lexical: 'What should I do if a tyre goes flat?',
        reworded: 'My bike stopped working in the middle of a ride, who can help me?',
        facts: ['0800 555 123', '90 minutes'],
      },
      fr: {
        title: 'Pannes et crevaisons',
        text: 'Si le vélo tombe en panne ou si un pneu crève, appelez notre assistance au 0800 555 123. Un technicien vient à vous en moins de 90 minutes dans le centre-ville.',
        lexical: 'Que faire si un pneu crève ?',
        reworded: "Mon vélo ne marche plus au milieu d'une balade, qui peut m'aider ?",
        facts: ['0800 555 123', '90 minutes'],
      },
      de: {
        title: 'Pannen und Plattfuß',
        text: 'Wenn das Rad eine Panne hat oder ein Reifen platt ist, rufen Sie unsere Pannenhilfe unter 0800 555 123 an. Ein Techniker kommt in der Innenstadt innerhalb von 90 Minuten zu Ihnen.',
        lexical: 'Was soll ich tun, wenn ein Reifen platt ist?',
        reworded: 'Mein Rad geht mitten auf der Tour nicht mehr, wer hilft mir?',
        facts: ['0800 555 123', '90 minuten'],
      },
      es: {
        title: 'Averías y pinchazos',
        text: 'Si la bicicleta se avería o se pincha una rueda, llame a nuestra asistencia en el 0800 555 123. Un técnico llega en menos de 90 minutos en el centro de la ciudad.',
        lexical: '¿Qué hago si se pincha una rueda?',
        reworded: 'Mi bici dejó de funcionar a mitad de ruta, ¿quién me ayuda?',
        facts: ['0800 555 123', '90 minutos'],
      },
      pt: {
        title: 'Avarias e furos',
        text: 'Se a bicicleta avariar ou um pneu furar, ligue para a nossa assistência no 0800 555 123. Um técnico chega até si em menos de 90 minutos no centro da cidade.',
        lexical: 'O que faço se um pneu furar?',
        reworded: 'A minha bicicleta deixou de andar a meio do passeio, quem me ajuda?',
        facts: ['0800 555 123', '90 minutos'],
      },
    },
  },
  {
    id: 'hours',
    versions: {
      en: {
        title: 'Shop opening hours',
        text: 'Our shop opens every day from 9 am to 7 pm between April and October. From November to March it opens from 10 am to 5 pm and is closed on Mondays.',
        lexical: 'What are the shop opening hours?',
        reworded: 'Can I pick up a bike on a Monday in winter?',
        facts: ['9 am to 7 pm', 'closed on mondays'],
      },
      fr: {
        title: "Horaires d'ouverture de la boutique",
        text: "Notre boutique est ouverte tous les jours de 9 h à 19 h d'avril à octobre. De novembre à mars, elle ouvre de 10 h à 17 h et elle est fermée le lundi.",
        lexical: "Quels sont les horaires d'ouverture de la boutique ?",
        reworded: 'Puis-je récupérer un vélo un lundi en hiver ?',
        facts: ['9 h à 19 h', 'fermée le lundi'],
      },
      de: {
        title: 'Öffnungszeiten des Ladens',
        text: 'Unser Laden ist von April bis Oktober täglich von 9 bis 19 Uhr geöffnet. Von November bis März öffnet er von 10 bis 17 Uhr und ist montags geschlossen.',
        lexical: 'Wie sind die Öffnungszeiten des Ladens?',
        reworded: 'Kann ich im Winter an einem Montag ein Rad abholen?',
        facts: ['9 bis 19 uhr', 'montags geschlossen'],
      },
      es: {
        title: 'Horario de la tienda',
        text: 'Nuestra tienda abre todos los días de 9 a 19 h de abril a octubre. De noviembre a marzo abre de 10 a 17 h y cierra los lunes.',
        lexical: '¿Cuál es el horario de la tienda?',
        reworded: '¿Puedo recoger una bici un lunes en invierno?',
        facts: ['9 a 19 h', 'cierra los lunes'],
      },
      pt: {
        title: 'Horário da loja',
        text: 'A nossa loja abre todos os dias das 9h às 19h de abril a outubro. De novembro a março abre das 10h às 17h e fecha às segundas-feiras.',
        lexical: 'Qual é o horário da loja?',
        reworded: 'Posso levantar uma bicicleta numa segunda-feira no inverno?',
        facts: ['9h às 19h', 'fecha às segundas'],
      },
    },
  },
];

const UNANSWERABLE_BY_LANGUAGE: Record<Lang, string[]> = {
  en: ['Do you rent out cargo bikes for moving furniture?', 'Can I pay the rental with cryptocurrency?'],
  fr: ['Louez-vous des vélos cargo pour un déménagement ?', 'Puis-je payer la location en cryptomonnaie ?'],
  de: ['Vermieten Sie Lastenräder für einen Umzug?', 'Kann ich die Miete mit Kryptowährung bezahlen?'],
  es: ['¿Alquilan bicicletas de carga para una mudanza?', '¿Puedo pagar el alquiler con criptomonedas?'],
  pt: ['Alugam bicicletas de carga para mudanças?', 'Posso pagar o aluguer com criptomoedas?'],
};

export const MULTILINGUAL_ARTICLES: (Article & { lang: Lang })[] = TOPICS.flatMap((topic) =>
  MULTILINGUAL_LANGUAGES.map((lang) => ({
    id: `${topic.id}-${lang}`,
    // Article's language type is the dev set's; the bench reads `lang`.
    language: 'en' as const,
    lang,
    split: 'held-out' as const,
    title: topic.versions[lang].title,
    text: topic.versions[lang].text,
  })),
);

export const MULTILINGUAL_QUESTIONS: (Question & { lang: Lang })[] = TOPICS.flatMap((topic) =>
  MULTILINGUAL_LANGUAGES.flatMap((lang) => {
    const version = topic.versions[lang];
    return (['lexical', 'reworded'] as const).map((kind) => ({
      text: version[kind],
      kind,
      article: `${topic.id}-${lang}`,
      facts: version.facts,
      lang,
    }));
  }),
);

export const MULTILINGUAL_UNANSWERABLE: (Question & { lang: Lang })[] = MULTILINGUAL_LANGUAGES.flatMap((lang) =>
  UNANSWERABLE_BY_LANGUAGE[lang].map((text) => ({
    text,
    kind: 'unanswerable' as const,
    article: null,
    facts: [],
    split: 'held-out' as const,
    lang,
  })),
);
