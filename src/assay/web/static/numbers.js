// Numbers and dates that scripts write, in the page's language (<html lang>), the same way
// the server's filters num, pct and when write them (Babel): "1.234,5" and "12,5 %" on a
// German page, "1,234.5" and "12.5%" on an English one. A missing value shows as an en dash.
(function () {
  "use strict";

  const DASH = "–";
  const lang = () => document.documentElement.lang || "en";

  // digits: fixed decimals; left out, as many as the value has (at most three)
  function num(value, digits) {
    if (value === null || value === undefined || Number.isNaN(Number(value))) return DASH;
    const fixed = digits === undefined ? { maximumFractionDigits: 3 }
      : { minimumFractionDigits: digits, maximumFractionDigits: digits };
    return new Intl.NumberFormat(lang(), fixed).format(Number(value));
  }

  // a share from 0 to 1 as a percentage
  function pct(value, digits = 0) {
    if (value === null || value === undefined || Number.isNaN(Number(value))) return DASH;
    return new Intl.NumberFormat(lang(), {
      style: "percent", minimumFractionDigits: digits, maximumFractionDigits: digits,
    }).format(Number(value));
  }

  // a date and time (an ISO string, a number of milliseconds or a Date) to the minute
  function when(value) {
    if (value === null || value === undefined || value === "") return DASH;
    const date = value instanceof Date ? value : new Date(value);
    if (Number.isNaN(date.getTime())) return DASH;
    return new Intl.DateTimeFormat(lang(), { dateStyle: "medium", timeStyle: "short" }).format(date);
  }

  window.assayFormat = { num, pct, when };
})();
