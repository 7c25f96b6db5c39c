/* viz_html.c — an interactive page around a Graphviz SVG picture (the shell's `dump`): the SVG
 * inline, a search box (nodes whose name matches stay lit, the others dim), click a node for its
 * FX line and stack ("# File:" comment), the IR buffers and the kernels that name it (read from
 * the texts beside the page), click a cluster's label to collapse or expand its nodes (a module
 * box in a collapsed FX picture, a kernel in the fusion picture), and a legend of the node
 * kinds. The texts are fetched from the files `dump` writes next to the page; opened from disk
 * where the browser refuses fetch, the node panel says so and the rest works. */
#include <stdlib.h>
#include <string.h>
#include "viz.h"

static const char CSS[] =
    "body{font-family:sans-serif;margin:0;display:flex;height:100vh}#side{width:28em;padding:.8em;overflow:auto;"
    "border-right:1px solid #ccc;font-size:13px}#pic{flex:1;overflow:auto}#pic svg{max-width:none}"
    "g.node.dim{opacity:.25}g.node.hit polygon,g.node.hit ellipse,g.node.hit path{stroke:#e69138;stroke-width:3}"
    "g.node{cursor:pointer}g.cluster text{cursor:pointer}g.hidden{display:none}pre{white-space:pre-wrap;"
    "background:#f6f6f6;padding:.4em;font-size:11px}.lg{display:inline-block;width:1em;height:1em;border:1px solid #888;"
    "vertical-align:middle;margin-right:.3em}";

static const char JS[] =
    "var texts={};['fx','ir','code'].forEach(function(k){var u=document.body.dataset[k];if(!u)return;"
    "fetch(u).then(function(r){return r.text();}).then(function(t){texts[k]=t;}).catch(function(){});});"
    "var svg=document.querySelector('#pic svg');"
    "function title(g){var t=g.querySelector('title');return t?t.textContent:'';}"
    "var nodes=[].slice.call(svg.querySelectorAll('g.node')),edges=[].slice.call(svg.querySelectorAll('g.edge'));"
    "document.getElementById('q').addEventListener('input',function(){var q=this.value.trim();var n=0;"
    "nodes.forEach(function(g){var m=q&&title(g).indexOf(q)>=0;g.classList.toggle('hit',!!m);"
    "g.classList.toggle('dim',!!q&&!m);if(m)n++;});document.getElementById('nq').textContent=q?n+' match(es)':'';});"
    "function lines(t,pred){return (t||'').split('\\n').map(function(l,i){return [i+1,l];}).filter(function(x){return pred(x[1]);});}"
    "function word(l,w){return new RegExp('(^|[^A-Za-z0-9_])'+w.replace(/[.*+?^${}()|[\\]\\\\]/g,'\\\\$&')+'([^A-Za-z0-9_]|$)').test(l);}"
    "function show(name){var p=document.getElementById('node');var h='<h3>'+name.replace(/</g,'&lt;')+'</h3>';"
    "if(!texts.fx){p.innerHTML=h+'<p>(open the page through a web server, e.g. minductor tlparse --serve, to see the texts)</p>';return;}"
    "var fl=texts.fx.split('\\n'),def=-1;fl.forEach(function(l,i){var s=l.trim();if(s.indexOf(name+':')===0||s.indexOf(name+' =')===0)def=i;});"
    "if(def>=0){var st='';for(var i=def-1;i>=0;i--){var s=fl[i].trim();if(s.indexOf('# File:')===0){st=s;break;}if(s.indexOf('#')!==0&&s.indexOf(':')<0)break;}"
    "h+='<p>FX line '+(def+1)+':</p><pre>'+fl[def].trim().replace(/</g,'&lt;')+'</pre>'+(st?'<p>stack:</p><pre>'+st.replace(/</g,'&lt;')+'</pre>':'');}"
    "var ir=lines(texts.ir,function(l){return word(l,name);});if(ir.length)h+='<p>IR lines:</p><pre>'+ir.slice(0,12).map(function(x){return x[0]+': '+x[1].trim();}).join('\\n').replace(/</g,'&lt;')+'</pre>';"
    "var k=lines(texts.code,function(l){return l.indexOf('Source Nodes:')>=0&&word(l.split('Original ATen')[0],name);});"
    "if(k.length)h+='<p>kernels (source-node comments):</p><pre>'+k.map(function(x){return x[0]+': '+x[1].trim();}).join('\\n').replace(/</g,'&lt;')+'</pre>';"
    "p.innerHTML=h;}"
    "nodes.forEach(function(g){g.addEventListener('click',function(){show(title(g));});});"
    /* collapse/expand: the nodes whose centre lies inside the cluster's box */
    "[].slice.call(svg.querySelectorAll('g.cluster')).forEach(function(c){var lab=c.querySelector('text');if(!lab)return;"
    "lab.addEventListener('click',function(){var b=c.getBBox(),hide=!c.dataset.closed;c.dataset.closed=hide?'1':'';var names={};"
    "nodes.forEach(function(g){var r=g.getBBox(),x=r.x+r.width/2,y=r.y+r.height/2;"
    "if(x>=b.x&&x<=b.x+b.width&&y>=b.y&&y<=b.y+b.height){g.classList.toggle('hidden',hide);names[title(g)]=1;}});"
    "edges.forEach(function(e){var t=title(e).split('->');if(names[t[0]]||names[t[1]])e.classList.toggle('hidden',hide);});"
    "lab.textContent=lab.textContent.replace(/ \\[collapsed\\]$/,'')+(hide?' [collapsed]':'');});});";

char *viz_svg_page(const char *svg, const char *title, const char *fx_text_url, const char *code_url) {
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head>\n", title, CSS);
    sb_printf(&b, "<body data-fx=\"%s\" data-ir=\"ir_post_fusion.txt\" data-code=\"%s\">\n<div id=\"side\"><h2>%s</h2>\n",
              fx_text_url ? fx_text_url : "", code_url ? code_url : "", title);
    sb_put(&b, "<p><input id=\"q\" placeholder=\"search nodes\" size=\"24\"> <span id=\"nq\"></span></p>\n"
               "<p>Click a node: its FX line, stack, IR and kernels. Click a cluster's label: collapse / expand it.</p>\n"
               "<div id=\"node\"></div>\n<h3>Legend</h3>\n<ul style=\"list-style:none;padding:0\">\n");
    static const struct { const char *name, *fill, *shape; } legend[] = {
        {"placeholder (input)", "#cfe2f3", "inverted house"}, {"pointwise", "#d9ead3", "rounded box"},
        {"reduction", "#fce5cd", "hexagon"}, {"view", "#eeeeee", "dashed box"}, {"extern kernel", "#d9d2e9", "3-d box"},
        {"output", "#cfe2f3", "house"}, {"unsupported op", "#f4cccc", "octagon"}, {"collapsed group", "#fff2cc", "folder"},
    };
    for (size_t i = 0; i < sizeof legend / sizeof *legend; i++)
        sb_printf(&b, "<li><span class=\"lg\" style=\"background:%s\"></span>%s (%s)</li>\n", legend[i].fill, legend[i].name,
                  legend[i].shape);
    sb_put(&b, "</ul>\n<p>Clusters: fusion groups (kernels), cond branches, modules.</p></div>\n<div id=\"pic\">\n");
    const char *start = strstr(svg, "<svg");          /* drop the XML prolog and doctype */
    sb_put(&b, start ? start : svg);
    sb_printf(&b, "</div>\n<script>%s</script>\n</body></html>\n", JS);
    return sb_take(&b);
}
