/* Dutch address autocomplete for any <input>: a WAI-ARIA 1.2 combobox with a listbox popup.
 *
 * Embed (the script's own origin is the API; the key is a publishable key for your origin):
 *   <input id="address" name="address">
 *   <script src="https://API-HOST/widget.js" data-key="nlk_..." data-input="#address"></script>
 * Optional: data-limit="5"; form fields with data-nl="NLD_POSTAL_CODE" (any component type, or
 * "latitude" / "longitude") are filled when an address is chosen; the input then fires the
 * event "nl-address" with the hit as its detail. Or from code: NLAddress.attach(input, options).
 *
 * The postcode mode (the Dutch checkout form): NLAddress.attachPostcode(postcodeInput,
 * numberInput, options), or data-postcode="#pc" data-number="#nr" on the script tag. Once both
 * hold a whole postcode and house number it asks /v1/address/postcode, fills the form fields
 * with data-nl (street, place, ...) from the address found, and offers the letters and
 * additions there in a labelled <select> after the number field (its first, the address
 * without them, chosen; a keyboard chooses another as any <select>); a note with role=status
 * says what was found.
 *
 * Every keystroke asks the API. A newer question aborts the one in flight (AbortController), and
 * an answer to anything but the newest question is dropped (a sequence number), so a slow answer
 * to an earlier prefix never replaces a newer one. Keys: ArrowDown / ArrowUp move through the
 * suggestions (and open them), Enter chooses, Escape closes (a second Escape clears), Tab leaves.
 */
(function () {
  "use strict";

  var script = document.currentScript;
  var scriptOrigin = script && script.src ? new URL(script.src, location.href).origin : location.origin;
  var instances = 0;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function valueOf(option) {
    return typeof option === "function" ? option() : option;
  }

  /* Append `line` to `parent`, the code-point spans of `spans` (sorted, merged) in <mark>. */
  function appendHighlighted(parent, line, spans) {
    if (!spans || !spans.length) {
      parent.appendChild(document.createTextNode(line));
      return;
    }
    var chars = Array.from(line); // offsets are Unicode code points, as in the API
    var at = 0;
    spans.forEach(function (span) {
      if (span[0] > at) parent.appendChild(document.createTextNode(chars.slice(at, span[0]).join("")));
      parent.appendChild(el("mark", "nla-hl", chars.slice(span[0], span[1]).join("")));
      at = span[1];
    });
    if (at < chars.length) parent.appendChild(document.createTextNode(chars.slice(at).join("")));
  }

  // the status line under an input: `text`, marked as an error or not
  function showNote(note, text, isError) {
    note.textContent = text;
    note.classList.toggle("nla-error", !!isError);
  }

  // the fields of `form` marked data-nl="<component type>" (or "latitude", "longitude") get
  // the chosen hit's values; those it has none for are emptied
  function fillForm(form, hit) {
    var values = { latitude: hit.location.latitude, longitude: hit.location.longitude };
    hit.components.forEach(function (c) {
      values[c.type] = c.value;
    });
    form.querySelectorAll("[data-nl]").forEach(function (field) {
      var name = field.getAttribute("data-nl");
      field.value = name in values ? String(values[name]) : "";
    });
  }

  function describeError(status, body) {
    if (status === 0) return "the address service cannot be reached";
    var code = body && body.code ? body.code : "error";
    var detail = body && body.detail ? ": " + body.detail : "";
    return status + " " + code + detail;
  }

  /**
   * Make `input` an address combobox. Options (each may be a function, read per request):
   *   key        API key (required)
   *   base       origin of the API (default: where widget.js came from)
   *   limit      1..10 (default 5)
   *   highlight  ask for the matched spans and show them in bold (default true)
 *   area       {municipality, locality, province, postcode, bbox}: only addresses there
 *              (the API's area parameters; empty values are left out)
   *   onAnswer   function({q, hits, ms, status, error})  after each shown answer
   *   onChoose   function(hit)
   * Returns {refresh(), close()}.
   */
  // One question to the API: resolves to {resp, body}; `seen` gets the status once it is known
  // (a body that is no JSON still leaves the status for the error shown)
  function askApi(opts, path, params, key, controller, seen) {
    return fetch((valueOf(opts.base) || scriptOrigin) + path + "?" + params, {
      headers: { Authorization: "Bearer " + key },
      credentials: "omit",
      signal: controller ? controller.signal : undefined,
    }).then(function (resp) {
      seen(resp.status);
      return resp.json().then(function (body) {
        return { resp: resp, body: body };
      });
    });
  }

  function attach(input, options) {
    var opts = options || {};
    var id = "nla-" + ++instances;
    var wrap = el("div", "nla"); // the input with its list below it, then the note
    var field = el("div", "nla-field");
    input.parentNode.insertBefore(wrap, input);
    wrap.appendChild(field);
    field.appendChild(input);
    var list = el("ul", "nla-list");
    list.id = id + "-list";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", "Address suggestions");
    list.hidden = true;
    var note = el("div", "nla-note");
    note.id = id + "-note";
    note.setAttribute("role", "status"); // announces how many addresses were found
    field.appendChild(list);
    wrap.appendChild(note);

    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-expanded", "false");
    input.setAttribute("aria-controls", list.id);
    input.setAttribute("aria-describedby", note.id);
    input.setAttribute("autocomplete", "off");
    input.setAttribute("spellcheck", "false");

    var hits = [];
    var active = -1;
    var seq = 0; // number of the newest question
    var inFlight = null; // its AbortController

    function setNote(text, isError) {
      showNote(note, text, isError);
    }

    function open(yes) {
      list.hidden = !yes;
      input.setAttribute("aria-expanded", yes ? "true" : "false");
      if (!yes) setActive(-1);
    }

    function setActive(index) {
      var options = list.children;
      if (active >= 0 && options[active]) options[active].setAttribute("aria-selected", "false");
      active = index;
      if (active >= 0 && options[active]) {
        options[active].setAttribute("aria-selected", "true");
        input.setAttribute("aria-activedescendant", options[active].id);
        options[active].scrollIntoView({ block: "nearest" });
      } else {
        input.removeAttribute("aria-activedescendant");
      }
    }

    function render(q, found, highlighted) {
      hits = found;
      active = -1;
      list.textContent = "";
      list.dataset.q = q;
      found.forEach(function (hit, i) {
        var option = el("li", "nla-option");
        option.id = id + "-opt-" + i;
        option.setAttribute("role", "option");
        option.setAttribute("aria-selected", "false");
        var spans = highlighted ? hit.highlights : null;
        var first = el("span", "nla-line1");
        appendHighlighted(first, hit.lines[0], spans && spans[0]);
        var second = el("span", "nla-line2");
        appendHighlighted(second, hit.lines[1], spans && spans[1]);
        option.appendChild(first);
        option.appendChild(second);
        option.addEventListener("mousedown", function (event) {
          event.preventDefault(); // keep the focus in the input
        });
        option.addEventListener("click", function () {
          choose(i);
        });
        option.addEventListener("mousemove", function () {
          if (active !== i) setActive(i);
        });
        list.appendChild(option);
      });
      open(found.length > 0);
      var n = found.length;
      setNote(n ? n + (n === 1 ? " address" : " addresses") + " found; use the arrow keys" : "No address found");
    }

    function fill(hit) {
      if (input.form) fillForm(input.form, hit);
    }

    function choose(index) {
      var hit = hits[index];
      if (!hit) return;
      seq++; // an answer still on its way must not reopen the list
      if (inFlight) inFlight.abort();
      input.value = hit.lines[0] + ", " + hit.lines[1];
      open(false);
      setNote("Chosen: " + input.value);
      fill(hit);
      if (opts.onChoose) opts.onChoose(hit);
      input.dispatchEvent(new CustomEvent("nl-address", { detail: hit, bubbles: true }));
    }

    function ask(q) {
      var mine = ++seq;
      if (inFlight) inFlight.abort();
      inFlight = null;
      if (!q.trim()) {
        render(q, [], false);
        setNote("");
        return;
      }
      var key = valueOf(opts.key);
      if (!key) {
        setNote("An API key is needed", true);
        return;
      }
      var highlight = valueOf(opts.highlight) !== false;
      var params = new URLSearchParams({ country: "NLD", q: q, limit: String(valueOf(opts.limit) || 5) });
      if (highlight) params.set("highlight", "true");
      var area = valueOf(opts.area) || {};
      Object.keys(area).forEach(function (name) {
        if (area[name]) params.set(name, area[name]);
      });
      var controller = typeof AbortController === "function" ? new AbortController() : null;
      inFlight = controller;
      var started = performance.now();
      var status = 0;
      askApi(opts, "/v1/address", params, key, controller, function (s) {
        status = s;
      })
        .then(function (answer) {
          if (mine !== seq) return; // a newer question was asked: drop this answer
          var ms = performance.now() - started;
          wrap.dataset.status = String(status);
          if (!answer.resp.ok) {
            var retry = answer.resp.headers.get("Retry-After");
            var text = describeError(status, answer.body) + (retry ? " (retry in " + retry + " s)" : "");
            wrap.dataset.error = answer.body && answer.body.code ? answer.body.code : String(status);
            setNote(text, true);
            if (opts.onAnswer) opts.onAnswer({ q: q, hits: null, ms: ms, status: status, error: text });
            return;
          }
          delete wrap.dataset.error;
          render(q, answer.body.hits, highlight);
          if (opts.onAnswer) opts.onAnswer({ q: q, hits: answer.body.hits, ms: ms, status: status });
        })
        .catch(function (error) {
          if (mine !== seq || (error && error.name === "AbortError")) return;
          wrap.dataset.status = String(status);
          wrap.dataset.error = status ? "bad_response" : "unreachable";
          var text = describeError(status, null);
          setNote(text, true);
          if (opts.onAnswer) opts.onAnswer({ q: q, hits: null, ms: 0, status: status, error: text });
        });
    }

    input.addEventListener("input", function () {
      ask(input.value);
    });
    input.addEventListener("keydown", function (event) {
      var n = hits.length;
      switch (event.key) {
        case "ArrowDown":
        case "ArrowUp":
          if (!n) return;
          event.preventDefault();
          if (list.hidden) open(true);
          if (event.key === "ArrowDown") setActive(active + 1 < n ? active + 1 : 0);
          else setActive(active > 0 ? active - 1 : n - 1);
          break;
        case "Enter":
          if (!list.hidden && active >= 0) {
            event.preventDefault(); // choose, do not submit the form
            choose(active);
          }
          break;
        case "Escape":
          event.preventDefault();
          if (!list.hidden) {
            open(false);
          } else if (input.value) {
            input.value = "";
            ask("");
          }
          break;
        case "Tab":
          open(false);
          break;
      }
    });
    input.addEventListener("blur", function () {
      open(false);
    });

    return {
      refresh: function () {
        ask(input.value);
      },
      close: function () {
        open(false);
      },
    };
  }

  // What /v1/address/postcode takes: the server fills these in when it serves this file
  // (server/pages.py WIDGET_RULES: the OpenAPI document's postcode pattern, the engine's
  // highest house number), so that the postcode mode asks only for a whole postcode and number.
  var RULES = /* WIDGET_RULES */ null;
  var POSTCODE = new RegExp(RULES.postcode);

  function isNumber(text) {
    return /^[1-9][0-9]*$/.test(text) && Number(text) <= RULES.numberMax;
  }

  /**
   * The postcode mode: `postcode` and `number` are two inputs of one form. Options as attach's
   * (key, base, onAnswer, onChoose). Returns {refresh()}.
   */
  function attachPostcode(postcode, number, options) {
    var opts = options || {};
    var id = "nla-pc-" + ++instances;
    var box = el("div", "nla-pc");
    var label = el("label", "nla-pc-label", "House letter and addition");
    var select = el("select", "nla-pc-select");
    select.id = id + "-select";
    label.htmlFor = select.id;
    var note = el("div", "nla-note");
    note.id = id + "-note";
    note.setAttribute("role", "status");
    box.appendChild(label);
    box.appendChild(select);
    box.hidden = true;
    number.parentNode.insertBefore(box, number.nextSibling);
    box.parentNode.insertBefore(note, box.nextSibling);
    number.setAttribute("aria-describedby", note.id);
    var hits = [];
    var seq = 0;
    var inFlight = null;
    var asked = "";

    function setNote(text, isError) {
      showNote(note, text, isError);
    }

    function fill(hit) {
      var form = number.form || postcode.form;
      if (form && hit) fillForm(form, hit);
      if (hit) {
        if (opts.onChoose) opts.onChoose(hit);
        number.dispatchEvent(new CustomEvent("nl-address", { detail: hit, bubbles: true }));
      }
    }

    function show(found) {
      hits = found;
      select.textContent = "";
      found.forEach(function (hit, i) {
        var option = el("option", "", hit.lines[0]);
        option.value = String(i);
        select.appendChild(option);
      });
      box.hidden = found.length === 0;
      var n = found.length;
      if (!n) setNote("No address with this postcode and number");
      else if (n === 1) setNote("Found: " + found[0].lines[0] + ", " + found[0].lines[1]);
      else setNote(n + " addresses here: " + found[0].lines[1] + "; choose the letter or addition");
      fill(found[0]);
    }

    function ask() {
      var pc = postcode.value.replace(/\s+/g, "").toUpperCase();
      var nr = number.value.trim();
      if (!POSTCODE.test(pc) || !isNumber(nr)) {
        asked = "";
        seq++;
        if (inFlight) inFlight.abort();
        hits = [];
        select.textContent = "";
        box.hidden = true;
        setNote("");
        return;
      }
      if (pc + " " + nr === asked) return;
      asked = pc + " " + nr;
      var mine = ++seq;
      if (inFlight) inFlight.abort();
      var key = valueOf(opts.key);
      if (!key) {
        setNote("An API key is needed", true);
        return;
      }
      var controller = typeof AbortController === "function" ? new AbortController() : null;
      inFlight = controller;
      var started = performance.now();
      var status = 0;
      var params = new URLSearchParams({ country: "NLD", postcode: pc, number: nr });
      askApi(opts, "/v1/address/postcode", params, key, controller, function (s) {
        status = s;
      })
        .then(function (answer) {
          if (mine !== seq) return;
          var ms = performance.now() - started;
          box.dataset.status = String(status);
          if (!answer.resp.ok) {
            var text = describeError(status, answer.body);
            asked = "";
            show([]);
            setNote(text, true);
            if (opts.onAnswer) opts.onAnswer({ q: pc + " " + nr, hits: null, ms: ms, status: status, error: text });
            return;
          }
          show(answer.body.hits);
          if (opts.onAnswer) opts.onAnswer({ q: pc + " " + nr, hits: answer.body.hits, ms: ms, status: status });
        })
        .catch(function (error) {
          if (mine !== seq || (error && error.name === "AbortError")) return;
          asked = "";
          setNote(describeError(status, null), true);
        });
    }

    postcode.addEventListener("input", ask);
    number.addEventListener("input", ask);
    select.addEventListener("change", function () {
      var hit = hits[Number(select.value)];
      if (hit) {
        setNote("Chosen: " + hit.lines[0] + ", " + hit.lines[1]);
        fill(hit);
      }
    });
    return {
      refresh: function () {
        asked = "";
        ask();
      },
    };
  }

  window.NLAddress = { attach: attach, attachPostcode: attachPostcode, origin: scriptOrigin };

  // Embedded with data-input (or data-postcode and data-number): attach to those inputs, with
  // the stylesheet from the same origin.
  if (script && (script.dataset.input || (script.dataset.postcode && script.dataset.number))) {
    var start = function () {
      if (!document.querySelector('link[data-nl-widget]')) {
        var css = document.createElement("link");
        css.rel = "stylesheet";
        css.href = scriptOrigin + "/widget.css";
        css.setAttribute("data-nl-widget", "");
        document.head.appendChild(css);
      }
      if (script.dataset.input) {
        document.querySelectorAll(script.dataset.input).forEach(function (input) {
          attach(input, { key: script.dataset.key, limit: Number(script.dataset.limit) || 5 });
        });
      }
      var pc = script.dataset.postcode && document.querySelector(script.dataset.postcode);
      var nr = script.dataset.number && document.querySelector(script.dataset.number);
      if (pc && nr) attachPostcode(pc, nr, { key: script.dataset.key });
    };
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
    else start();
  }
})();
