! Fortran MPI: 3 Allreduce of one double, a Bcast of 4 integers, rank 0 sends 10 integers
! to rank 1 twice, a Barrier; then 5 ring steps of Isend/Irecv of 8 integers and a Waitall,
! one Sendrecv of 2 integers round the ring, rank 0 Ssends 3 integers to rank 1 (Irecv +
! Wait there), and a Gather, Scatter, Allgather and Alltoall of one integer per rank.
program fortran_mpi
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, i, left, right
  integer :: values(10), small(4), inbox(8), outbox(8), gathered(64), requests(2)
  double precision :: x, y
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  do i = 1, 3
    x = rank
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  small = rank
  call MPI_Bcast(small, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  values = rank
  outbox = rank
  do i = 1, 2
    if (rank == 0) then
      call MPI_Send(values, 10, MPI_INTEGER, 1, i, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
      call MPI_Recv(values, 10, MPI_INTEGER, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end if
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  do i = 1, 5
    call MPI_Irecv(inbox, 8, MPI_INTEGER, left, 20 + i, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(outbox, 8, MPI_INTEGER, right, 20 + i, MPI_COMM_WORLD, requests(2), ierr)
    call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_Sendrecv(outbox, 2, MPI_INTEGER, right, 30, inbox, 2, MPI_INTEGER, left, 30, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (rank == 0) then
    call MPI_Ssend(outbox, 3, MPI_INTEGER, 1, 40, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call MPI_Irecv(inbox, 3, MPI_INTEGER, 0, 40, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Wait(requests(1), MPI_STATUS_IGNORE, ierr)
  end if
  call MPI_Gather(rank, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Scatter(gathered, 1, MPI_INTEGER, i, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Allgather(rank, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Alltoall(outbox, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program fortran_mpi
