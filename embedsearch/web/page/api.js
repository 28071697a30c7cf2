// The API as the page calls it, its errors said as a reader should read them: what went wrong and what to
// do, never a validator's message.
export function readable(status, message) {
  if (status === 0) return "The server could not be reached. Is embedsearch serve still running?";
  if (status === 404) return "That paper is not in the index (it may have been removed).";
  if (status === 503) return "The index is busy. Try again in a few seconds.";
  if (status === 501) return message;  // not served here (a cluster's ingress): the message names what is
  if (status >= 500) return "The server could not answer this time. Try again; if it keeps failing, see its log.";
  if (status === 422 || status === 414 || status === 413) return "The request could not be read: " +
    (/characters|too large|long/.test(message) ? "the text is too long." : "check the query and the settings.");
  return message;  // 400 and 409 are written for a reader (a filter on an unknown field, a duplicate)
}

export async function api(path, options = {}) {
  let response;
  try { response = await fetch(path, options); } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new Error(readable(0, ""));
  }
  let body = null;
  try { body = await response.json(); } catch (e) {
    if (e.name === "AbortError") throw e;  // a newer request replaced this one while its body was read
    body = {error: response.statusText};
  }
  if (!response.ok) throw new Error(readable(response.status, body.error || ""));
  return body;
}

export const post = (path, body) => api(path, {method: "POST", headers: {"Content-Type": "application/json"},
                                               body: JSON.stringify(body)});

// Text from the data that a spreadsheet would run (=, +, -, @, a tab or CR first) gets a leading apostrophe
// (OWASP), numbers stay numbers: as disk/csvout.py does for every CSV the server writes.
export const csvCell = (v) => {
  const s = typeof v === "string" && /^[=+\-@\t\r]/.test(v) ? `'${v}` : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};
