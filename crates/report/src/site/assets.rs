//! The site's style and scripts, inline in every page (nothing is loaded
//! from the network, so the site opens from disk and from any static web
//! server alike). The scripts only sort, filter and compare what the page
//! already holds; they insert text with `textContent`, never markup.

/// Style on top of the HTML report's.
pub const SITE_CSS: &str = "
main.wide{max-width:1500px}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:' \\25B2'}
table.sortable th[aria-sort=descending]::after{content:' \\25BC'}
table.site td{vertical-align:top}
.scroll{overflow-x:auto}
table.site th,table.site td{padding:.25em .5em}
td.verdict{white-space:normal;min-width:8em}
td.cmd{white-space:normal;max-width:20em;overflow-wrap:anywhere}
table.site td .sub{font-size:.8em;white-space:normal;max-width:22em}
.filter{margin:.6em 0}
.filter input{font:inherit;padding:.3em .5em;min-width:24em}
form.pick{margin:.6em 0}
form.pick select{font:inherit;max-width:30em;margin:0 .6em 0 .3em}
form.pick button{font:inherit}
#js-error{background:#fdecea;color:#c62828;border:1px solid #c62828;padding:.5em 1em;margin:1em 0}
code{background:#f0f3f6;padding:0 .3em}
figure.history{display:inline-block;margin:.3em .6em .3em 0;vertical-align:top}
figure.history svg{max-width:100%;height:auto}
figure.bars{display:inline-block;vertical-align:top;margin:.4em 1.2em .8em 0;min-width:26em}
figure.bars figcaption{font-weight:600;color:#222;margin:0 0 .2em}
table.bars td{padding:.1em .4em;border:none}
table.bars td.bar{position:relative;width:14em;min-width:8em}
table.bars .range{position:absolute;top:.2em;height:1.1em;background:#cfe0f0}
table.bars .fill{position:relative;display:block;height:.7em;background:#1f77b4}
";

/// First in every page's head: a script error is shown in the page and
/// marked on the document element (the browser test looks for the mark),
/// not lost in a console nobody opens.
pub const ONERROR_JS: &str = "window.onerror=function(m,src,line){\
var t='script error: '+m+(line?' (line '+line+')':'');\
document.documentElement.setAttribute('data-js-error',t);\
var d=document.getElementById('js-error');if(d){d.hidden=false;d.textContent=t;}};";

/// Sorting every `table.sortable` by a click (or Enter) on a header, and
/// the index's filter box. A cell's `data-v` is its numeric sort key
/// (empty: no figure, sorted last either way); other cells sort by text.
pub const TABLE_JS: &str = r#"(function () {
  function key(row, i) {
    var c = row.cells[i];
    var v = c.getAttribute('data-v');
    if (v === null) return c.textContent.trim().toLowerCase();
    if (v === '') return null;
    return parseFloat(v);
  }
  function sortBy(table, i, dir) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a, i), y = key(b, i);
      if (x === null || y === null) return (x === null) - (y === null);
      var d = (typeof x === 'number' && typeof y === 'number') ? x - y : String(x).localeCompare(String(y));
      return d * dir;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    var heads = table.tHead.rows[0].cells;
    for (var j = 0; j < heads.length; j++) heads[j].removeAttribute('aria-sort');
    heads[i].setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.tabIndex = 0;
      th.title = 'sort by this column';
      function go() { sortBy(table, i, th.getAttribute('aria-sort') === 'ascending' ? -1 : 1); }
      th.addEventListener('click', go);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); }
      });
    });
  });
  var filter = document.getElementById('filter');
  var table = document.getElementById('machines-table');
  if (filter && table) {
    var shown = document.getElementById('shown');
    var apply = function () {
      var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      var rows = table.tBodies[0].rows, n = 0;
      for (var i = 0; i < rows.length; i++) {
        var text = rows[i].textContent.toLowerCase();
        var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
        rows[i].hidden = !ok;
        if (ok) n++;
      }
      shown.textContent = n + ' of ' + rows.length + ' machines shown';
    };
    filter.addEventListener('input', apply);
    apply();
  }
  document.documentElement.setAttribute('data-js', 'ready');
})();
"#;

/// The comparison page: two machines picked (from the form, or from
/// `?a=KEY&b=KEY` / `#a=KEY&b=KEY` in the address), their latest runs'
/// figures side by side, and for each figure the ratio and verdict the
/// site's builder computed over their recent runs (`site::verdicts`): the
/// script decides nothing; past the builder's machine limit it shows the
/// latest runs' ratio and no verdict.
pub const COMPARE_JS: &str = r#"(function () {
  var data = JSON.parse(document.getElementById('site-data').getAttribute('data-json'));
  var byKey = {};
  data.machines.forEach(function (m) { byKey[m.key] = m; });
  var a = document.getElementById('a'), b = document.getElementById('b');
  var wanted = {};
  (location.hash || location.search).replace(/^[#?]/, '').split('&').forEach(function (kv) {
    var p = kv.split('=');
    if (p.length === 2) wanted[decodeURIComponent(p[0])] = decodeURIComponent(p[1].replace(/\+/g, ' '));
  });
  if (byKey[wanted.a]) a.value = wanted.a;
  if (byKey[wanted.b]) b.value = wanted.b;
  function el(tag, text, cls, parent) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }
  function verdict(A, B, l) {
    var pair = data.verdicts && data.verdicts[A.key + ' ' + B.key];
    return (pair && pair[l]) || null;
  }
  function link(parent, href, text) {
    var l = el('a', text, '', parent);
    l.href = href;
  }
  function render() {
    var A = byKey[a.value], B = byKey[b.value];
    var out = document.getElementById('result');
    while (out.firstChild) out.removeChild(out.firstChild);
    if (!A || !B) { el('p', 'Pick two machines.', '', out); return; }
    var who = el('p', '', '', out);
    [['A', A], ['B', B]].forEach(function (s, i) {
      if (i) el('br', undefined, '', who);
      el('b', s[0] + ' = ', '', who);
      link(who, 'machines/' + s[1].key + '.html', s[1].name);
      who.appendChild(document.createTextNode(', latest run '));
      link(who, 'runs/' + s[1].run + '.html', 'run ' + s[1].run);
      who.appendChild(document.createTextNode(' (' + s[1].date + ')'));
    });
    var table = el('table', undefined, 'site', out);
    table.id = 'cmp-table';
    var hr = el('tr', undefined, '', el('thead', undefined, '', table));
    ['figure', 'A (latest)', 'B (latest)', 'B / A (recent runs)', 'verdict (recent runs)'].forEach(function (h) { el('th', h, '', hr); });
    var body = el('tbody', undefined, '', table);
    var labels = [];
    A.figures.concat(B.figures).forEach(function (f) { if (labels.indexOf(f.l) < 0) labels.push(f.l); });
    function find(m, l) { for (var i = 0; i < m.figures.length; i++) if (m.figures[i].l === l) return m.figures[i]; return null; }
    labels.forEach(function (l) {
      var fa = find(A, l), fb = find(B, l), tr = el('tr', undefined, 'fig', body);
      el('td', l, 'l', tr);
      el('td', fa ? fa.t : '-', fa && fa.n ? 'noisy' : '', tr);
      el('td', fb ? fb.t : '-', fb && fb.n ? 'noisy' : '', tr);
      var v = fa && fb ? verdict(A, B, l) : null;
      if (v) {
        el('td', v[2] || '-', '', tr);
        el('td', v[0], 'l ' + v[1], tr);
      } else if (fa && fb && fa.v !== 0) {
        el('td', (fb.v / fa.v).toFixed(3) + '\u00d7', '', tr);
        el('td', data.verdicts ? '' : 'verdict: hwcal db compare', 'l', tr);
      } else {
        el('td', '-', '', tr);
        el('td', fa || fb ? 'measured on one side only' : '', 'l', tr);
      }
    });
    var hint = el('p', 'The full comparison, with every figure and the curves overlaid: ', 'sub', out);
    el('code', 'hwcal report ' + A.run + ' ' + B.run + ' --html compare.html', '', hint);
    var h = '#a=' + encodeURIComponent(a.value) + '&b=' + encodeURIComponent(b.value);
    if (location.hash !== h) location.replace(h);
  }
  a.addEventListener('change', render);
  b.addEventListener('change', render);
  document.getElementById('pick').addEventListener('submit', function (e) { e.preventDefault(); render(); });
  render();
  document.documentElement.setAttribute('data-js', 'ready');
})();
"#;
