-- innoflush: sysbench transactions of several statements — a few INSERTs of new rows (as
-- oltp_insert makes them) and one UPDATE of an existing row — and one COMMIT: the shape of
-- an application's order or event write, which none of sysbench's own scripts has
-- (oltp_insert is one statement, oltp_write_only four of one kind each).
--
--   sysbench scripts/sysbench/oltp_multi.lua --tables=4 --table-size=10000 ... prepare
--   sysbench scripts/sysbench/oltp_multi.lua --multi-inserts=3 --threads=4 ... run
--
-- It uses sysbench's oltp_common (its tables, prepare, cleanup and options).
require("oltp_common")

sysbench.cmdline.options.multi_inserts = {"INSERTs per transaction", 3}

function prepare_statements()
   prepare_begin()
   prepare_commit()
   prepare_non_index_updates()
end

function event()
   begin()
   local tnum = sysbench.rand.uniform(1, sysbench.opt.tables)
   for _ = 1, sysbench.opt.multi_inserts do
      con:query(string.format(
         "INSERT INTO sbtest%d (k, c, pad) VALUES (%d, '%s', '%s')", tnum,
         sysbench.rand.default(1, sysbench.opt.table_size), get_c_value(), get_pad_value()))
   end
   execute_non_index_updates()
   commit()
end
