/**
 * Disguised-refusal detection: a conservative list of whole phrases, matched
 * case-insensitively with straight and curly apostrophes alike, near the
 * start of a text block. Pure.
 *
 * Single words such as "sorry" or "unable" are deliberately absent: a genuine
 * answer may apologise for something unrelated. The same holds in the other
 * languages covered (Chinese, Spanish, German, French): first-person
 * inability, a missing permission, or a request for confirmation, as whole
 * phrases; never a lone "permiso", "Berechtigung" or "权限".
 *
 * @module
 */

/** The phrases, written with straight apostrophes and single spaces. */
export const REFUSAL_PHRASES: readonly string[] = [
  "as an ai",
  "as a language model",
  "i don't have access to",
  "i do not have access to",
  "i don't have the ability to",
  "i do not have the ability to",
  "i don't have real-time",
  "i do not have real-time",
  "i'm unable to",
  "i am unable to",
  "i'm not able to",
  "i am not able to",
  "i cannot help with",
  "i can't help with",
  "i cannot assist with",
  "i can't assist with",
  "i cannot provide",
  "i can't provide",
  "i cannot access",
  "i can't access",
  "i cannot comply",
  "i can't comply",
  "i'm not allowed to",
  "i am not allowed to",
  "i'm not permitted to",
  "i am not permitted to",
  "i'm sorry, but i can't",
  "i'm sorry, but i cannot",
  "i'm sorry, i can't",
  "i'm sorry, i cannot",
  "i'm afraid i can't",
  "i'm afraid i cannot",
  "i won't be able to",
  "i will not be able to",
  "i must decline",
  "i have to decline",
  "unable to fulfill",
  "cannot fulfill",
  "can't fulfill",
  // Chinese. No spaces between words, so these match inside a sentence.
  "需要确认",
  "需要您确认",
  "请先确认",
  "无法执行",
  "没有权限",
  "无权访问",
  "权限不足",
  "拒绝访问",
  "我无法",
  "我不能帮",
  "我没有访问",
  "作为一个人工智能",
  "作为人工智能",
  "作为ai",
  "作为一个ai",
  // Spanish.
  "no tengo permiso",
  "no tengo permisos",
  "no tengo acceso",
  "no tengo autorización",
  "no estoy autorizado",
  "no estoy autorizada",
  "no puedo",
  "no me es posible",
  "permiso denegado",
  "acceso denegado",
  "como modelo de lenguaje",
  "como una ia",
  // German.
  "ich kann nicht",
  "ich kann leider nicht",
  "ich kann ihnen nicht",
  "ich kann dir nicht",
  "ich darf nicht",
  "ich bin nicht in der lage",
  "ich habe keinen zugriff",
  "keine berechtigung",
  "zugriff verweigert",
  "als sprachmodell",
  "als ki-sprachmodell",
  // French.
  "je ne peux pas",
  "je ne suis pas en mesure de",
  "je n'ai pas accès",
  "je n'ai pas la permission",
  "je n'ai pas l'autorisation",
  "je ne suis pas autorisé",
  "je ne suis pas autorisée",
  "permission refusée",
  "accès refusé",
  "en tant qu'ia",
  "en tant que modèle de langage",
];

/** A letter or digit: a Latin-script phrase must not touch one at either end. */
const WORD_CHAR = /[\p{L}\p{N}]/u;
/** Scripts written without spaces: a phrase ending in one has no word boundary to check. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** Whether `neighbour` may stand next to a phrase edge `edge`. */
function boundaryOk(edge: string, neighbour: string): boolean {
  return UNSPACED.test(edge) || UNSPACED.test(neighbour) ||
    !WORD_CHAR.test(neighbour);
}

/**
 * How far into a text block a phrase may start and still count. A refusal
 * opens the answer; the same words deep inside a long document (a file that
 * quotes a chatbot, say) are content, not a refusal.
 */
export const REFUSAL_WINDOW = 300;

/** A refusal found in a response text. */
export interface RefusalMatch {
  /** The phrase from {@linkcode REFUSAL_PHRASES}. */
  phrase: string;
  /** Offset of the match in the normalised text. */
  offset: number;
  /** The text around the match, as sent (at most ~120 characters). */
  excerpt: string;
}

/**
 * Normalise text for matching: lower case, every apostrophe-like character
 * (’ ‘ ʼ ′ ` ´) as `'`, runs of whitespace as one space. Keeps offsets aligned
 * with the input (one character in, one out) except for whitespace runs.
 */
export function normalizeForMatch(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc\u2032\u0060\u00b4\uff07]/g, "'")
    .replace(/\s+/g, " ");
}

/**
 * Find the first refusal phrase that starts within
 * {@linkcode REFUSAL_WINDOW} characters of the start of `text`.
 *
 * @example
 * ```ts
 * findRefusal("I\u2019m sorry, but I can\u2019t access live data.")?.phrase; // "i'm sorry, but i can't"
 * findRefusal("Paris: 18 °C, clear skies") === null; // true
 * ```
 */
export function findRefusal(text: string): RefusalMatch | null {
  // NFC first: "refusée" typed as e + combining accent matches too.
  const source = text.trimStart().normalize("NFC");
  const norm = normalizeForMatch(source);
  const head = norm.slice(0, REFUSAL_WINDOW + 60);
  let best: RefusalMatch | null = null;
  for (const phrase of REFUSAL_PHRASES) {
    let at = head.indexOf(phrase);
    // Whole words only: "as an ai" must not match "as an aide".
    while (at !== -1) {
      const before = at === 0 ? " " : head[at - 1]!;
      const after = head[at + phrase.length] ?? " ";
      if (
        boundaryOk(phrase[0]!, before) && boundaryOk(phrase.at(-1)!, after)
      ) break;
      at = head.indexOf(phrase, at + 1);
    }
    if (at === -1 || at > REFUSAL_WINDOW) continue;
    if (best === null || at < best.offset) {
      const shown = source.replace(/\s+/g, " ");
      const start = Math.max(0, at - 20);
      best = {
        phrase,
        offset: at,
        excerpt: (start > 0 ? "…" : "") +
          shown.slice(start, at + phrase.length + 60).trim(),
      };
    }
  }
  return best;
}
