/* The try-it page at GET /: widget.js on a search box, plus the key, the limit, the timing and
 * the chosen address. The page holds no key: it asks for one, or uses the server's demo key
 * (GET /demo-key, only when the server was started with ADDRESS_DEMO_RATE). */
(function () {
  "use strict";

  var LABELS = {
    NLD_PUBLIC_SPACE: "Street",
    NLD_HOUSE_NUMBER: "House number",
    NLD_HOUSE_LETTER: "House letter",
    NLD_HOUSE_NUMBER_ADDITION: "Addition",
    NLD_POSTAL_CODE: "Postcode",
    NLD_LOCALITY: "Locality",
    NLD_MUNICIPALITY: "Municipality",
    NLD_PROVINCE: "Province",
    NLD_COUNTRY: "Country",
  };
  var STORE = "nla-key";

  function $(id) {
    return document.getElementById(id);
  }

  var input = $("address");
  var keyInput = $("key");
  var keyBox = $("key-box");
  var limit = $("limit");
  var timing = $("timing");
  var demo = null; // {key, rate}

  $("own-origin").textContent = location.origin;
  try {
    keyInput.value = sessionStorage.getItem(STORE) || "";
  } catch (e) {
    /* storage may be off: the key then lasts as long as the page */
  }

  function currentKey() {
    return keyInput.value.trim() || (demo && demo.key) || "";
  }

  function describeKey() {
    var state = $("key-state");
    if (keyInput.value.trim()) state.textContent = "your key";
    else if (demo)
      state.textContent =
        "this server's demo key (" + demo.client_rate + " requests/s for you, " + demo.rate + " for all)";
    else state.textContent = "none yet: paste one to start";
  }

  keyInput.addEventListener("input", function () {
    try {
      sessionStorage.setItem(STORE, keyInput.value.trim());
    } catch (e) {
      /* see above */
    }
    describeKey();
  });

  fetch("/demo-key", { cache: "no-store", credentials: "omit" })
    .then(function (resp) {
      return resp.ok ? resp.json() : null;
    })
    .then(function (body) {
      demo = body;
    })
    .catch(function () {
      demo = null;
    })
    .then(function () {
      describeKey();
      keyBox.open = !currentKey(); // ask for a key only when there is none to use
      document.body.dataset.ready = "true";
    });

  function showTiming(answer) {
    timing.classList.toggle("error", !!answer.error);
    if (answer.error) {
      timing.textContent = answer.error;
      return;
    }
    var n = answer.hits.length;
    timing.textContent =
      (n === 1 ? "1 address" : n + " addresses") + " in " + answer.ms.toFixed(1) + " ms";
  }

  function showAddress(hit) {
    $("chosen-lines").textContent = "";
    hit.lines.forEach(function (line) {
      var span = document.createElement("span");
      span.textContent = line;
      $("chosen-lines").appendChild(span);
    });
    var body = $("chosen-components");
    body.textContent = "";
    hit.components.forEach(function (c) {
      var row = document.createElement("tr");
      var name = document.createElement("th");
      name.scope = "row";
      name.textContent = LABELS[c.type] || c.type;
      var code = document.createElement("code");
      code.textContent = c.type;
      name.appendChild(code);
      var value = document.createElement("td");
      value.textContent = String(c.value);
      row.appendChild(name);
      row.appendChild(value);
      body.appendChild(row);
    });
    var lat = hit.location.latitude.toFixed(6);
    var lon = hit.location.longitude.toFixed(6);
    $("chosen-coords").textContent = lat + ", " + lon;
    $("chosen-map").href =
      "https://www.openstreetmap.org/?mlat=" + lat + "&mlon=" + lon + "#map=18/" + lat + "/" + lon;
    $("chosen").hidden = false;
  }

  // the date of the register the served index holds (GET /readyz: an LVBAG extract's, or the
  // last mutation delivery's applied to it), and how many days old it is
  function describeRegister(index) {
    var shown = $("register-date");
    if (index && index.register_date) {
      var days = index.register_age_days;
      var age = days === 0 ? "today" : days === 1 ? "1 day old" : days + " days old";
      shown.textContent = "register of " + index.register_date + " (" + age + ")";
    } else if (index) {
      shown.textContent = "register date not known (built from " + (index.source_name || "a CSV") + ")";
    }
    shown.dataset.ready = "true";
  }
  fetch("/readyz", { cache: "no-store", credentials: "omit" })
    .then(function (resp) {
      return resp.json();
    })
    .then(function (body) {
      describeRegister(body.index);
    })
    .catch(function () {
      describeRegister(null);
    });

  var box = NLAddress.attach(input, {
    key: currentKey,
    base: location.origin,
    limit: function () {
      return Number(limit.value);
    },
    onAnswer: showTiming,
    onChoose: showAddress,
    area: function () {
      return { municipality: $("area").value.trim() };
    },
  });
  limit.addEventListener("change", function () {
    box.refresh();
  });
  $("area").addEventListener("change", function () {
    box.refresh();
  });

  // the postcode flow of a Dutch form: postcode and number fill in street and place
  NLAddress.attachPostcode($("pc"), $("nr"), { key: currentKey, base: location.origin, onChoose: showAddress });
  $("pc-form").addEventListener("submit", function (event) {
    event.preventDefault();
  });

  // the addresses at a location, nearest first, with their distance
  $("near-go").addEventListener("click", function () {
    var note = $("near-note");
    var list = $("near-list");
    var params = new URLSearchParams({
      country: "NLD",
      lat: $("near-lat").value.trim(),
      lon: $("near-lon").value.trim(),
      limit: limit.value,
    });
    note.textContent = "Asking…";
    note.classList.remove("error");
    fetch(location.origin + "/v1/address/reverse?" + params, {
      headers: { Authorization: "Bearer " + currentKey() },
      credentials: "omit",
    })
      .then(function (resp) {
        return resp.json().then(function (body) {
          return { ok: resp.ok, status: resp.status, body: body };
        });
      })
      .then(function (answer) {
        list.textContent = "";
        if (!answer.ok) {
          note.textContent = answer.status + " " + answer.body.code + ": " + answer.body.detail;
          note.classList.add("error");
          return;
        }
        answer.body.hits.forEach(function (hit) {
          var item = document.createElement("li");
          item.textContent = hit.lines[0] + ", " + hit.lines[1] + " (" + hit.distance.toFixed(1) + " m)";
          list.appendChild(item);
        });
        var n = answer.body.hits.length;
        note.textContent = n ? n + (n === 1 ? " address" : " addresses") + ", nearest first" : "No address near";
      })
      .catch(function () {
        note.textContent = "the address service cannot be reached";
        note.classList.add("error");
      });
  });
})();
