// "Topics over time" on the served map: a button opening each topic's share per period of a year or date
// field (/topics/over-time), drawn with plotly (the Python package's plotly.min.js, loaded before this module
// as a classic script: it has no module build): the eight largest topics shown, the rest in the legend,
// keywords on hover. The field and the level come from the page's #over-time-config.
const {field, level} = JSON.parse(document.getElementById("over-time-config").textContent);

document.body.insertAdjacentHTML("beforeend", `
<button id="over-time-open" type="button" style="position:fixed;right:12px;bottom:12px;z-index:9">Topics over time</button>
<div id="over-time" role="dialog" aria-label="Topics over time" style="display:none;position:fixed;inset:4%;z-index:10;
 background:#fff;border:1px solid #bbb;box-shadow:0 4px 24px rgba(0,0,0,.25);padding:10px;flex-direction:column">
 <p style="margin:0 0 6px"><strong>Topics over time</strong> <span id="over-time-note"></span>
 <button id="over-time-close" type="button" style="float:right">Close</button></p>
 <div id="over-time-plot" style="flex:1;min-height:240px"></div>
</div>`);

const box = document.getElementById("over-time"), note = document.getElementById("over-time-note");

function traces(rows) {
  const byTopic = new Map();
  for (const r of rows) if (r.topic >= 0) byTopic.set(r.topic, [...(byTopic.get(r.topic) || []), r]);
  const total = (topic) => topic.reduce((s, r) => s + r.count, 0);
  return [...byTopic.values()].sort((a, b) => total(b) - total(a)).map((topic, i) => ({
    x: topic.map((r) => r.period), y: topic.map((r) => r.share), mode: "lines+markers",
    name: `${topic[0].topic}: ${topic[0].name}`, visible: i < 8 ? true : "legendonly", hoverinfo: "text",
    text: topic.map((r) => `${r.name}<br>${r.period}: ${r.count} papers (${Math.round(r.share * 100)}%)<br>${r.keywords.join(", ")}`)}));
}

document.getElementById("over-time-close").onclick = () => { box.style.display = "none"; };
document.getElementById("over-time-open").onclick = async () => {
  box.style.display = "flex";
  note.textContent = "share of each period's papers, by " + field;
  try {
    const response = await fetch(`/topics/over-time?field=${encodeURIComponent(field)}&level=${encodeURIComponent(level)}`);
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    globalThis.Plotly.newPlot("over-time-plot", traces(body.rows), {margin: {l: 50, r: 10, t: 10, b: 40},
      yaxis: {tickformat: ".0%"}, xaxis: {title: {text: field}, type: "category"}, legend: {orientation: "h", y: -0.2}},
      {responsive: true, displaylogo: false});
  } catch (e) { note.textContent = "could not load the chart: " + e.message; }
};
