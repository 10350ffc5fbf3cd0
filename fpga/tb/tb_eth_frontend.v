// Testbench of clio_eth_rx -> clio_eth_tx in loopback (the fast path answers along the route
// it received), driven by fpga/scripts/check_frontend.py: frames in from +in=FILE (one beat a
// line: last keep data, hex), RX output (the fast path's view) to +rxout=FILE (last keep
// data route), TX output (to the MAC) to +txout=FILE. Random gaps on the input and random
// back-pressure on the output.
`timescale 1ns / 1ps
`default_nettype none
module tb_eth_frontend;
    reg clk = 0, rst = 1;
    always #2 clk = ~clk;
    reg          s_tvalid = 0, s_tlast = 0, tx_ready = 0;
    reg  [511:0] s_tdata = 0;
    reg  [63:0]  s_tkeep = 0;
    wire         s_tready, p_tvalid, p_tready, p_tlast, t_tvalid, t_tlast;
    wire [511:0] p_tdata, t_tdata;
    wire [63:0]  p_tkeep, t_tkeep;
    wire [255:0] p_route;
    wire [31:0]  rx_dropped, tx_dropped;

    clio_eth_rx rx (.clk(clk), .rst(rst), .s_tvalid(s_tvalid), .s_tready(s_tready), .s_tdata(s_tdata),
        .s_tkeep(s_tkeep), .s_tlast(s_tlast), .m_tvalid(p_tvalid), .m_tready(p_tready), .m_tdata(p_tdata),
        .m_tkeep(p_tkeep), .m_tlast(p_tlast), .m_route(p_route), .dropped(rx_dropped));
    clio_eth_tx tx (.clk(clk), .rst(rst), .s_tvalid(p_tvalid), .s_tready(p_tready), .s_tdata(p_tdata),
        .s_tkeep(p_tkeep), .s_tlast(p_tlast), .s_route(p_route), .m_tvalid(t_tvalid), .m_tready(tx_ready),
        .m_tdata(t_tdata), .m_tkeep(t_tkeep), .m_tlast(t_tlast), .dropped(tx_dropped));

    reg [8*256-1:0] inf, rxf, txf;
    integer fin, frx, ftx, n, idle, seed;
    reg l; reg [63:0] k; reg [511:0] d;
    initial begin
        if (!$value$plusargs("in=%s", inf)) $finish;
        if (!$value$plusargs("rxout=%s", rxf)) $finish;
        if (!$value$plusargs("txout=%s", txf)) $finish;
        seed = 1;
        fin = $fopen(inf, "r"); frx = $fopen(rxf, "w"); ftx = $fopen(txf, "w");
        repeat (4) @(posedge clk); @(negedge clk); rst = 0;
        while (!$feof(fin)) begin
            n = $fscanf(fin, "%h %h %h\n", l, k, d);
            if (n == 3) begin
                while (($random(seed) & 3) == 0) @(negedge clk);
                s_tvalid = 1; s_tdata = d; s_tkeep = k; s_tlast = l;
                @(posedge clk); while (!s_tready) @(posedge clk);
                @(negedge clk); s_tvalid = 0;
            end
        end
        idle = 0;
        while (idle < 500) begin @(posedge clk); idle = idle + 1; end
        $fdisplay(frx, "dropped %0d", rx_dropped);
        $fdisplay(ftx, "dropped %0d", tx_dropped);
        $fclose(frx); $fclose(ftx);
        $display("DONE tb_eth_frontend");
        $finish;
    end
    always @(negedge clk) tx_ready = !rst && (($random(seed) % 4) != 0);
    always @(posedge clk) begin
        if (p_tvalid && p_tready) $fdisplay(frx, "%0d %016h %0128h %064h", p_tlast, p_tkeep, p_tdata, p_route);
        if (t_tvalid && tx_ready) $fdisplay(ftx, "%0d %016h %0128h", t_tlast, t_tkeep, t_tdata);
    end
endmodule
`default_nettype wire
