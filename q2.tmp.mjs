import Database from 'better-sqlite3';
const db = new Database(process.argv[2]);
const ptable='rec_8';
console.log(db.pragma('temp_store'), db.pragma('cache_size'));
const prods = db.prepare(`select id from ${ptable} limit 200`).all().map(r=>r.id);
const lines=[]; for (let c=0;c<400;c++){ const ids=new Set(); for(let j=0;j<3;j++) ids.add(prods[(c*7+j*31)%200]); for(const id of ids) lines.push([c,id]); }
const V=`WITH cart (k, product_id) AS (VALUES ${lines.map(()=>'(?, ?)').join(', ')}) `;
const b=[...lines.flat(),'bench-carts'];
const time=(name,sql)=>{let t=performance.now(); const r=db.prepare(sql).all(...b); console.log(name, r.length, (performance.now()-t).toFixed(0));};
time('count', V+`SELECT count(*) FROM cart c CROSS JOIN erp_co_purchases cp WHERE cp.tenant_id = ? AND cp.product_id = c.product_id`);
time('rows', V+`SELECT c.k, cp.other_id, cp.orders FROM cart c CROSS JOIN erp_co_purchases cp WHERE cp.tenant_id = ? AND cp.product_id = c.product_id`);
time('group int', V+`SELECT c.k, cp.other_id, sum(cp.orders) FROM cart c CROSS JOIN erp_co_purchases cp WHERE cp.tenant_id = ? AND cp.product_id = c.product_id GROUP BY c.k, cp.other_id`);
time('group int, count', V+`SELECT count(*) FROM (SELECT c.k, cp.other_id, sum(cp.orders) FROM cart c CROSS JOIN erp_co_purchases cp WHERE cp.tenant_id = ? AND cp.product_id = c.product_id GROUP BY c.k, cp.other_id)`);
time('count again', V+`SELECT count(*) FROM cart c CROSS JOIN erp_co_purchases cp WHERE cp.tenant_id = ? AND cp.product_id = c.product_id`);
